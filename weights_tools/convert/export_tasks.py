#!/usr/bin/env python3
"""Export the documents that lm-evaluation-harness 0.4.7 evaluates for gna's `knowledge` and `gsm8k`:

    python3 weights_tools/convert/export_tasks.py OUT_FOLDER [--tasks arc_easy,gsm8k,...]

writes OUT_FOLDER/<task>.jsonl (and, for gsm8k, OUT_FOLDER/gsm8k_train.jsonl, the few-shot pool): one line
per row of the dataset split that lm-eval evaluates, in the dataset's order, with the row's own fields
(json.dumps(row, ensure_ascii=False)). Then

    gna knowledge -m MODEL --data OUT_FOLDER
    gna gsm8k -m MODEL --data OUT_FOLDER

Needs the `datasets` package and the network (the Hugging Face hub). Which split: a task with a
test_split evaluates it, else its validation_split (ConfigurableTask.eval_docs); gsm8k's fewshot_split
is train. The hub ids are today's names of the datasets lm-eval 0.4.7's yamls name
(lm_eval/tasks/<task>/*.yaml, dataset_path / dataset_name); each comment gives the yaml's dataset_path.
"""
import json, os, sys

# task: (hub id, config, split)
TASKS = {
    "arc_easy": ("allenai/ai2_arc", "ARC-Easy", "test"),             # dataset_path: allenai/ai2_arc
    "arc_challenge": ("allenai/ai2_arc", "ARC-Challenge", "test"),   # dataset_path: allenai/ai2_arc
    "openbookqa": ("allenai/openbookqa", "main", "test"),            # dataset_path: openbookqa
    # dataset_path: piqa (ybisk/piqa, a loading script that datasets >= 4 no longer runs); baber/piqa is
    # the same rows as parquet (goal, sol1, sol2, label), the path lm-eval itself moved to (PR #2790)
    "piqa": ("baber/piqa", None, "validation"),
    "hellaswag": ("Rowan/hellaswag", None, "validation"),            # dataset_path: hellaswag
    "winogrande": ("allenai/winogrande", "winogrande_xl", "validation"),  # dataset_path: winogrande
    "gsm8k": ("openai/gsm8k", "main", "test"),                       # dataset_path: gsm8k
    "gsm8k_train": ("openai/gsm8k", "main", "train"),                # gsm8k's fewshot_split
}
# the fields gna reads: a row without one of them means the hub id no longer holds lm-eval's data
FIELDS = {
    "arc_easy": ["id", "question", "choices", "answerKey"],
    "arc_challenge": ["id", "question", "choices", "answerKey"],
    "openbookqa": ["id", "question_stem", "choices", "answerKey"],
    "piqa": ["goal", "sol1", "sol2", "label"],
    "hellaswag": ["activity_label", "ctx_a", "ctx_b", "endings", "label"],
    "winogrande": ["sentence", "option1", "option2", "answer"],
    "gsm8k": ["question", "answer"],
    "gsm8k_train": ["question", "answer"],
}


def export(name, out):
    import datasets
    path, config, split = TASKS[name]
    rows = datasets.load_dataset(path, config, split=split)
    missing = [k for k in FIELDS[name] if k not in rows.features]
    assert not missing, f"{path} {config} {split} has no field(s) {missing}: {list(rows.features)}"
    target = os.path.join(out, name + ".jsonl")
    with open(target, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{name}: {len(rows)} rows from {path}{' ' + config if config else ''} {split} -> {target}")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out, names = args[0], list(TASKS)
    if len(args) == 3 and args[1] == "--tasks":
        names = args[2].split(",")
        if "gsm8k" in names and "gsm8k_train" not in names:
            names.append("gsm8k_train")
    elif len(args) != 1:
        sys.exit(__doc__)
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        sys.exit(f"unknown task(s) {', '.join(unknown)}; known: {', '.join(TASKS)}")
    os.makedirs(out, exist_ok=True)
    for name in names:
        export(name, out)


if __name__ == "__main__":
    main()
