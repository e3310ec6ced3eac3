#!/usr/bin/env python3
"""Make the golden fixtures of gna's harnesses (`gna mmlu`, `gna mc`, `gna kv`, `gna heads`): two tiny random-weight
checkpoints saved by transformers, small hand-written test data, and the expected per-sample logs and
aggregate results, computed in float64 on the CPU the way lm-evaluation-harness 0.4.7 (the version the
G&A paper used) computes them, and, for `kv`, the way the paper's authors' kv_retrieval.py scores.

    python3 weights_tools/make_harness_fixtures.py test/fixtures/harness

Needs torch, transformers, tokenizers, safetensors and numpy, no network, and the real Llama-3.1
tokenizer in test/.cache/llama3_1/tokenizer.json (`make tokenizer-cache`). That file is not committed;
llama3_tiny/ is saved without it and the test copies it in (llama3_tiny/NOTE.txt says so).

`--data-only` writes the data files and checks the hand-written prompts with the standard library
alone (no model, no tokenizer, no expected results).

What it writes under OUT (README.md there says the same):
  llama3_tiny/          LlamaForCausalLM, vocab 128256 (Llama-3.1's), hidden 8, tied embeddings, bf16
  mamba2_tiny/          Mamba2ForCausalLM, vocab 1500, hidden 16, tied, bf16, with the committed Falcon-pipeline
                        tokenizer test/fixtures/tokenizers/falcon/tokenizer.json copied in
  data/mmlu/{dev,test}/<subject>_{dev,test}.csv   MMLU's CSV layout, bytes written by hand
  data/mmlu.jsonl       the same questions as JSONL
  data/mc.jsonl         generic multiple choice {"context", "choices", "gold"}
  data/keys.txt         the key words of `gna kv --keys`
  cases/<name>/         command.txt (gna's arguments; MODEL_LLAMA3 stands for llama3_tiny with the
                        tokenizer copied in), expected_log.jsonl, expected_results.json
  cases/heads_<name>/   command.txt, expected_heads.json (`gna heads --json`'s layout): every head's G&A
                        scores and the accuracies under the ablations gna picks from them (section 9)
  MANIFEST.txt          versions, seeds, and per case the smallest decision margins

The lm-eval rules mirrored here, with where they are in lm-evaluation-harness v0.4.7:
  lm_eval/tasks/mmlu/default/_default_template_yaml   doc_to_text, choices A-D, fewshot split dev, first_n
  lm_eval/tasks/mmlu/_generate_configs.py             description, subject -> category
  lm_eval/api/task.py  ConfigurableTask.fewshot_context, construct_requests, process_results
  lm_eval/api/samplers.py  ContextSampler.get_context, FirstNSampler.sample
  lm_eval/api/model.py  TemplateLM.loglikelihood, _encode_pair
  lm_eval/models/huggingface.py  tok_encode (add_special_tokens=False unless add_bos_token), _loglikelihood_tokens
  lm_eval/api/metrics.py  mean, sample_stddev, mean_stderr, pooled_sample_stderr, aggregate_subtask_metrics
  lm_eval/evaluator_utils.py  TaskOutput.calculate_aggregate_metric, consolidate_group_results
  lm_eval/evaluator.py  the logged sample (doc_id, target = doc_to_target(doc), arguments, resps, metrics)
"""
import csv, hashlib, io, json, math, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LLAMA3_TOKENIZER = os.path.join(ROOT, "test", ".cache", "llama3_1", "tokenizer.json")
LLAMA3_TOKENIZER_SHA256 = "e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7"  # test/fetch_tokenizers.sh
FALCON_TOKENIZER = os.path.join(ROOT, "test", "fixtures", "tokenizers", "falcon", "tokenizer.json")

LLAMA_SEED = 101
MAMBA2_SEED = 102
MAX_COMMITTED_BYTES = 3_000_000

# =============================================================================================
# 1. MMLU test data: the intended documents, and the CSV bytes written by hand that must parse to them.
#    A document is (question as stored, [4 choices as stored], answer letter).

MMLU_SUBJECTS = {  # lm_eval/tasks/mmlu/_generate_configs.py SUBJECTS
    "abstract_algebra": "stem",
    "high_school_us_history": "humanities",
    "virology": "other",
}
# the order of lm_eval/tasks/mmlu/default/_mmlu.yaml's `task:` list; `mmlu` aggregates its leaf tasks
# (the subjects) in this order, group after group
MMLU_CATEGORIES = ["stem", "other", "social_sciences", "humanities"]

MMLU_DOCS = {
    ("abstract_algebra", "dev"): [
        ("Find all c in Z_3 such that Z_3[x]/(x^2 + c) is a field.", ["0", "1", "2", "3"], "B"),
        ("Statement 1 | If aH is an element of a factor group, then |aH| divides |a|. Statement 2 | If H and K "
         "are subgroups of G then HK is a subgroup of G.", ["True, True", "False, False", "True, False", "False, True"], "B"),
        ("Find the characteristic of the ring 2Z.", ["0", "3", "12", "30"], "A"),
        ("What is the order of the element (4, 2) of Z_12 x Z_8?", ["2", "4", "8", "12"], "D"),
        ("Find the order of the group S_3, the symmetric group on 3 letters:", ["3", "6", "9", "27"], "B"),
    ],
    ("abstract_algebra", "test"): [
        ("Find the degree for the given field extension Q(sqrt(2)) over Q.", ["0", "2", "1", "4"], "B"),
        ("Let p = (1, 2, 5, 4)(2, 3) in S_5 . Find the index of <p> in S_5.", ["8", "2", "24", "120"], "C"),
        ("Is {0} a subgroup of every group?", ["Yes", "No", "Only for abelian groups", '"It depends"'], "A"),
        ("Which of the following is a ring homomorphism from Z to Z:", ["x -> 0", "x -> x", "x -> 2x", "x -> x + 1"], "B"),
        ("Compute 7^2 mod 10", ["9", "49", "7", "1"], "A"),
        ("How many elements does the field GF(4) have?", ["2", "3", "4", "8"], "C"),
    ],
    ("high_school_us_history", "dev"): [
        ('This question refers to the following information.\n"Four score and seven years ago our fathers brought '
         'forth on this continent, a new nation."\nThe passage above was delivered by',
         ["George Washington", "Abraham Lincoln", "Thomas Jefferson", "Ulysses S. Grant"], "B"),
        ("In what year was the Declaration of Independence signed?", ["1776", "1789", "1492", "1812"], "A"),
        ('Which of the following best describes the "New Deal"?',
         ["A set of programs, reforms and projects", "A 1950s trade agreement", "A naval treaty", "A card game"], "A"),
        ("The Missouri Compromise (1820):\n\n- admitted Maine as a free state\n- admitted Missouri as a slave state\n\n"
         "It drew which line?", ["36\u00b030\u2032 parallel", "49th parallel", "Mason\u2013Dixon line", "Mississippi River"], "A"),
        ("Who was the first president of the United States?",
         ["John Adams", "George Washington", "James Madison", "Benjamin Franklin"], "B"),
        ("The Louisiana Purchase was bought from", ["Spain", "Britain", "France", "Mexico"], "C"),
    ],
    ("high_school_us_history", "test"): [
        ("   Which amendment abolished slavery?  \n",
         ["13th Amendment ", "14th Amendment", "15th Amendment  ", "19th Amendment"], "A"),
        ('Which document begins with "We the People"?',
         ["The Constitution", "The Bill of Rights", "", " The Federalist Papers"], "A"),
        ("\tThe Erie Canal connected the Hudson River to", ["Lake Erie", "Lake Michigan", "the Pacific", " the Gulf of Mexico"], "A"),
        ("The Seneca Falls Convention of 1848 focused on:", ["women's rights", "abolition", "temperance", "labor unions"], "A"),
        ("The 19th Amendment (1920) granted",
         ["income tax", "women the right to vote", "prohibition", "direct election of senators"], "B"),
    ],
    ("virology", "dev"): [
        ("Which of these viruses causes COVID-19 \U0001F9A0?", ["HIV", "SARS-CoV-2", "HPV", "Influenza A"], "B"),
        ("La rougeole est caus\u00e9e par quel virus ?",
         ["un r\u00e9trovirus", "un paramyxovirus", "un coronavirus", "un herp\u00e8svirus"], "B"),
        ("\u6d41\u611f\u75c5\u6bd2\u5c5e\u4e8e\u54ea\u4e00\u79d1\uff1f",
         ["\u51a0\u72b6\u75c5\u6bd2\u79d1", "\u75b1\u75b9\u75c5\u6bd2\u79d1", "\u6b63\u7c98\u75c5\u6bd2\u79d1",
          "\u526f\u7c98\u75c5\u6bd2\u79d1"], "C"),
        ("Which virus family has a segmented double-stranded RNA genome?",
         ["Reoviridae", "Picornaviridae", "Flaviviridae", "Retroviridae"], "A"),
        ("Bacteriophages infect:", ["fungi", "plants", "humans", "bacteria"], "D"),
    ],
    ("virology", "test"): [
        ("\u00a0What is the envelope glycoprotein of HIV called?\u3000", ["p24", "gp120", "reverse transcriptase", "integrase"], "B"),
        ("Which of the following is a DNA virus?",
         ["Hepatitis C virus", "Hepatitis A virus", "Hepatitis B virus", "Hepatitis E virus"], "C"),
        ("R0 = 2.5 means:", ["each case infects 2.5 others, on average", "the virus mutates 2.5 times", "2.5% die",
                             "none of these"], "A"),
        ("mRNA vaccines encode:", ["the whole virus", "antibodies", "", "the spike protein"], "D"),
        ("Which emoji \U0001F637 shows a face mask?", ["\U0001F912", "\U0001F637", "\U0001F927", "\U0001F642"], "B"),
        ("Zika virus is transmitted mainly by which vector?", ["Aedes mosquitoes", "Ticks", "Bats", "Rodents"], "A"),
    ],
}

# The files, byte for byte. What each exercises:
#   abstract_algebra_dev   CRLF line endings; quoted fields holding commas
#   abstract_algebra_test  a UTF-8 BOM; a field of doubled quotes only ("""It depends"""); quoted answer "C"
#   high_school_us_history_dev   line breaks (and blank lines) inside quoted fields; doubled quotes; non-ASCII
#   high_school_us_history_test  a question with spaces around it and a line break after it (lm-eval strips
#                          the question); choices with trailing spaces and a leading space (kept: lm-eval
#                          does not strip choices); an empty choice written ""; a leading tab
#   virology_dev           non-ASCII (é, 中文, full-width ？, an emoji); no line break at the end of the file
#   virology_test          a question led by U+00A0 and ended by U+3000 (Python's str.strip removes both);
#                          an empty choice; emoji choices; every field quoted in the last row
MMLU_CSV = {
    ("abstract_algebra", "dev"): (
        "Find all c in Z_3 such that Z_3[x]/(x^2 + c) is a field.,0,1,2,3,B\r\n"
        '"Statement 1 | If aH is an element of a factor group, then |aH| divides |a|. Statement 2 | If H and K are '
        'subgroups of G then HK is a subgroup of G.","True, True","False, False","True, False","False, True",B\r\n'
        "Find the characteristic of the ring 2Z.,0,3,12,30,A\r\n"
        '"What is the order of the element (4, 2) of Z_12 x Z_8?",2,4,8,12,D\r\n'
        '"Find the order of the group S_3, the symmetric group on 3 letters:",3,6,9,27,B\r\n'
    ),
    ("abstract_algebra", "test"): (
        "\ufeffFind the degree for the given field extension Q(sqrt(2)) over Q.,0,2,1,4,B\n"
        '"Let p = (1, 2, 5, 4)(2, 3) in S_5 . Find the index of <p> in S_5.",8,2,24,120,C\n'
        'Is {0} a subgroup of every group?,"Yes","No","Only for abelian groups","""It depends""",A\n'
        "Which of the following is a ring homomorphism from Z to Z:,x -> 0,x -> x,x -> 2x,x -> x + 1,B\n"
        "Compute 7^2 mod 10,9,49,7,1,A\n"
        'How many elements does the field GF(4) have?,2,3,4,"8","C"\n'
    ),
    ("high_school_us_history", "dev"): (
        '"This question refers to the following information.\n""Four score and seven years ago our fathers brought '
        'forth on this continent, a new nation.""\nThe passage above was delivered by",George Washington,'
        "Abraham Lincoln,Thomas Jefferson,Ulysses S. Grant,B\n"
        "In what year was the Declaration of Independence signed?,1776,1789,1492,1812,A\n"
        '"Which of the following best describes the ""New Deal""?","A set of programs, reforms and projects",'
        "A 1950s trade agreement,A naval treaty,A card game,A\n"
        '"The Missouri Compromise (1820):\n\n- admitted Maine as a free state\n- admitted Missouri as a slave state\n\n'
        'It drew which line?",36\u00b030\u2032 parallel,49th parallel,Mason\u2013Dixon line,Mississippi River,A\n'
        "Who was the first president of the United States?,John Adams,George Washington,James Madison,Benjamin Franklin,B\n"
        "The Louisiana Purchase was bought from,Spain,Britain,France,Mexico,C\n"
    ),
    ("high_school_us_history", "test"): (
        '"   Which amendment abolished slavery?  \n",13th Amendment ,14th Amendment,15th Amendment  ,19th Amendment,A\n'
        '"Which document begins with ""We the People""?",The Constitution,The Bill of Rights,""," The Federalist Papers",A\n'
        "\tThe Erie Canal connected the Hudson River to,Lake Erie,Lake Michigan,the Pacific, the Gulf of Mexico,A\n"
        "The Seneca Falls Convention of 1848 focused on:,women's rights,abolition,temperance,labor unions,A\n"
        "The 19th Amendment (1920) granted,income tax,women the right to vote,prohibition,direct election of senators,B\n"
    ),
    ("virology", "dev"): (
        "Which of these viruses causes COVID-19 \U0001F9A0?,HIV,SARS-CoV-2,HPV,Influenza A,B\n"
        "La rougeole est caus\u00e9e par quel virus ?,un r\u00e9trovirus,un paramyxovirus,un coronavirus,un herp\u00e8svirus,B\n"
        "\u6d41\u611f\u75c5\u6bd2\u5c5e\u4e8e\u54ea\u4e00\u79d1\uff1f,\u51a0\u72b6\u75c5\u6bd2\u79d1,"
        "\u75b1\u75b9\u75c5\u6bd2\u79d1,\u6b63\u7c98\u75c5\u6bd2\u79d1,\u526f\u7c98\u75c5\u6bd2\u79d1,C\n"
        "Which virus family has a segmented double-stranded RNA genome?,Reoviridae,Picornaviridae,Flaviviridae,Retroviridae,A\n"
        "Bacteriophages infect:,fungi,plants,humans,bacteria,D"
    ),
    ("virology", "test"): (
        "\u00a0What is the envelope glycoprotein of HIV called?\u3000,p24,gp120,reverse transcriptase,integrase,B\n"
        "Which of the following is a DNA virus?,Hepatitis C virus,Hepatitis A virus,Hepatitis B virus,Hepatitis E virus,C\n"
        '"R0 = 2.5 means:","each case infects 2.5 others, on average",the virus mutates 2.5 times,2.5% die,none of these,A\n'
        'mRNA vaccines encode:,the whole virus,antibodies,"",the spike protein,D\n'
        "Which emoji \U0001F637 shows a face mask?,\U0001F912,\U0001F637,\U0001F927,\U0001F642,B\n"
        '"Zika virus is transmitted mainly by which vector?","Aedes mosquitoes","Ticks","Bats","Rodents","A"\n'
    ),
}


def parse_mmlu_csv(data):
    """bytes -> [{"question", "choices", "answer"}]: Python's csv module (quotes, doubled quotes, line breaks in
    quotes, CRLF), after dropping a UTF-8 BOM (as pandas does); no field is stripped"""
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    docs = []
    for row in csv.reader(io.StringIO(text, newline="")):
        assert len(row) == 6, row
        assert row[5] in ("A", "B", "C", "D"), row
        docs.append({"question": row[0], "choices": row[1:5], "answer": "ABCD".index(row[5])})
    return docs


def mmlu_docs_from_csv():
    """{(subject, split): [doc]} parsed from MMLU_CSV, checked against MMLU_DOCS"""
    out = {}
    for key, text in MMLU_CSV.items():
        docs = parse_mmlu_csv(text.encode("utf-8"))
        intended = [{"question": q, "choices": list(c), "answer": "ABCD".index(a)} for q, c, a in MMLU_DOCS[key]]
        assert docs == intended, (key, docs, intended)
        for d in docs:
            d["subject"] = key[0]
        out[key] = docs
    assert set(out) == set(MMLU_DOCS)
    # lm-eval drops a few-shot example equal to the evaluated doc (samplers.py get_context: x != doc);
    # no dev row equals a test row here, so every k-shot context has exactly k examples
    for s in MMLU_SUBJECTS:
        for d in out[(s, "test")]:
            assert all(d != e for e in out[(s, "dev")])
    return out


# =============================================================================================
# 2. Generic multiple choice and the KV keys

MC_DOCS = [
    {"context": "Question: What is the boiling point of water at sea level?\nAnswer:",
     "choices": ["100 degrees Celsius", "0 degrees Celsius", "50 degrees Celsius", "212 degrees Kelvin"], "gold": 0},
    {"context": "The capital of France is ",            # trailing space: moved into the continuation ("  Paris")
     "choices": ["Paris", "a large city on the Seine river", "Lyon"], "gold": 0},
    {"context": "Complete the sentence.\nThe cat sat on the\n",   # trailing line break: moved too ("\n mat")
     "choices": ["mat", "roof of the old barn", "\U0001F642"], "gold": 0},
    {"context": "Traduire \u00ab bonjour \u00bb en chinois :",
     "choices": ["\u4f60\u597d", "\u518d\u89c1", "\u8c22\u8c22\u4f60", "hello", "caf\u00e9 au lait"], "gold": 0},
    {"context": "Sarah gave the book to Maria because",
     "choices": ["she had finished reading it", "she wanted it"], "gold": 0},
    {"context": "Pick the prime number:",
     "choices": ["2", "four", "nine hundred", "15", "a composite number like 21"], "gold": 0},
    {"context": "A man is sitting on a roof. He",
     "choices": ["starts pulling up roofing on a roof.", "is using wrap to wrap a pair of skis.",
                 "is ripping level tiles off.", "is holding a rubik's cube."], "gold": 3},
    {"context": "Fill in: 2 + 2 =\t ",                   # tab and space moved ("\t  4")
     "choices": ["4", "22", "four", "5"], "gold": 0},
    {"context": "The accented letter in 'caf\u00e9' is",  # é: 1 character, 2 UTF-8 bytes
     "choices": ["\u00e9", "ca", "f"], "gold": 0},
]

KEYS = ["apple", "river", "candle", "mountain", "pencil", "garden", "window", "rocket", "violin", "harbor",
        "blanket", "tiger"]
KV_PAIRS = [3, 5]
KV_SAMPLES = 4
KV_SEED = 7

# =============================================================================================
# 3. Prompts (lm-eval's MMLU template; the paper's KV template)


def mmlu_description(subject):
    return "The following are multiple choice questions (with answers) about " + " ".join(subject.split("_")) + ".\n\n"


def mmlu_doc_to_text(doc):
    c = doc["choices"]
    return (doc["question"].strip() + "\nA. " + c[0] + "\nB. " + c[1] + "\nC. " + c[2] + "\nD. " + c[3]
            + "\nAnswer:")


def mmlu_context(subject, dev, doc, shots):
    """ConfigurableTask.fewshot_context: description + FirstNSampler's first `shots` dev docs, each
    doc_to_text + target_delimiter " " + choice letter + fewshot_delimiter "\\n\\n", then doc_to_text(doc)"""
    assert shots <= len(dev)
    ctx = mmlu_description(subject)
    for ex in [x for x in dev[:shots] if x != doc][:shots]:
        ctx += mmlu_doc_to_text(ex) + " " + "ABCD"[ex["answer"]] + "\n\n"
    return ctx + mmlu_doc_to_text(doc)


MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, state):
        self.state = state & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def kv_sample(keys, n, s, seed):
    """gna kv's sample s of the setting with n pairs: (prompt, choices, gold)"""
    rng = SplitMix64((seed << 32) | (n << 20) | s)
    K = len(keys)
    assert n <= K and n <= 100
    idx = list(range(K))
    for i in range(n):
        j = i + rng.next() % (K - i)
        idx[i], idx[j] = idx[j], idx[i]
    v = list(range(100))
    for i in range(n):
        j = i + rng.next() % (100 - i)
        v[i], v[j] = v[j], v[i]
    q = rng.next() % n
    ks, vs = [keys[idx[i]] for i in range(n)], v[:n]
    prompt = ("Memorize the following dictionary:\n" + "".join(f"{k}:{val}\n" for k, val in zip(ks, vs))
              + f"The value of the key '{ks[q]}' is")
    return prompt, [str(val) for val in vs], q


# Hand-written expected prompts, typed from the rules, not built by the code above.
EXPECTED_PROMPTS = {
    ("abstract_algebra", 0, 0):
        "The following are multiple choice questions (with answers) about abstract algebra.\n\n"
        "Find the degree for the given field extension Q(sqrt(2)) over Q.\nA. 0\nB. 2\nC. 1\nD. 4\nAnswer:",
    ("abstract_algebra", 0, 5):
        "The following are multiple choice questions (with answers) about abstract algebra.\n\n"
        "Find all c in Z_3 such that Z_3[x]/(x^2 + c) is a field.\nA. 0\nB. 1\nC. 2\nD. 3\nAnswer: B\n\n"
        "Statement 1 | If aH is an element of a factor group, then |aH| divides |a|. Statement 2 | If H and K are "
        "subgroups of G then HK is a subgroup of G.\nA. True, True\nB. False, False\nC. True, False\nD. False, True\n"
        "Answer: B\n\n"
        "Find the characteristic of the ring 2Z.\nA. 0\nB. 3\nC. 12\nD. 30\nAnswer: A\n\n"
        "What is the order of the element (4, 2) of Z_12 x Z_8?\nA. 2\nB. 4\nC. 8\nD. 12\nAnswer: D\n\n"
        "Find the order of the group S_3, the symmetric group on 3 letters:\nA. 3\nB. 6\nC. 9\nD. 27\nAnswer: B\n\n"
        "Find the degree for the given field extension Q(sqrt(2)) over Q.\nA. 0\nB. 2\nC. 1\nD. 4\nAnswer:",
    ("high_school_us_history", 0, 0):
        "The following are multiple choice questions (with answers) about high school us history.\n\n"
        "Which amendment abolished slavery?\nA. 13th Amendment \nB. 14th Amendment\nC. 15th Amendment  \n"
        "D. 19th Amendment\nAnswer:",
    ("high_school_us_history", 1, 1):
        "The following are multiple choice questions (with answers) about high school us history.\n\n"
        "This question refers to the following information.\n\"Four score and seven years ago our fathers brought "
        "forth on this continent, a new nation.\"\nThe passage above was delivered by\nA. George Washington\n"
        "B. Abraham Lincoln\nC. Thomas Jefferson\nD. Ulysses S. Grant\nAnswer: B\n\n"
        "Which document begins with \"We the People\"?\nA. The Constitution\nB. The Bill of Rights\nC. \n"
        "D.  The Federalist Papers\nAnswer:",
    ("virology", 0, 0):
        "The following are multiple choice questions (with answers) about virology.\n\n"
        "What is the envelope glycoprotein of HIV called?\nA. p24\nB. gp120\nC. reverse transcriptase\n"
        "D. integrase\nAnswer:",
}
EXPECTED_KV = {
    (3, 0): ("Memorize the following dictionary:\nwindow:42\nrocket:6\ntiger:44\nThe value of the key 'window' is",
             ["42", "6", "44"], 0),
    (5, 2): ("Memorize the following dictionary:\nriver:99\ntiger:84\npencil:26\nrocket:36\nviolin:19\n"
             "The value of the key 'rocket' is", ["99", "84", "26", "36", "19"], 3),
}


def check_prompts(mmlu):
    assert SplitMix64(0).next() == 0xE220A8397B1DCDAF  # splitmix64's published first output from state 0
    for (subject, i, shots), want in EXPECTED_PROMPTS.items():
        got = mmlu_context(subject, mmlu[(subject, "dev")], mmlu[(subject, "test")][i], shots)
        assert got == want, (subject, i, shots, got, want)
    for (n, s), want in EXPECTED_KV.items():
        got = kv_sample(KEYS, n, s, KV_SEED)
        assert got == want, (n, s, got, want)


# =============================================================================================
# 4. Writing the data


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_data(out, mmlu):
    data = os.path.join(out, "data")  # its own files only: data/tasks is make_task_fixtures.py's
    shutil.rmtree(os.path.join(data, "mmlu"), ignore_errors=True)
    for (subject, split), text in MMLU_CSV.items():
        write_bytes(os.path.join(data, "mmlu", split, f"{subject}_{split}.csv"), text.encode("utf-8"))
    # JSONL: subjects out of name order, one subject's test lines before its dev lines, and the virology
    # test lines written with \\u escapes only (an emoji becomes a surrogate pair); gna must group by
    # subject and split and keep the file order within each
    lines = []
    order = [("virology", "dev"), ("virology", "test"), ("abstract_algebra", "test"), ("abstract_algebra", "dev"),
             ("high_school_us_history", "dev"), ("high_school_us_history", "test")]
    assert sorted(order) == sorted(MMLU_CSV)
    for subject, split in order:
        for d in mmlu[(subject, split)]:
            obj = {"subject": subject, "split": split, "question": d["question"], "choices": d["choices"],
                   "answer": d["answer"]}
            lines.append(json.dumps(obj, ensure_ascii=(subject, split) == ("virology", "test")))
    write_bytes(os.path.join(data, "mmlu.jsonl"), ("\n".join(lines) + "\n").encode("utf-8"))
    # reading the JSONL back gives the same documents as the CSV files
    back = {}
    for line in lines:
        o = json.loads(line)
        back.setdefault((o["subject"], o["split"]), []).append(
            {"question": o["question"], "choices": o["choices"], "answer": o["answer"], "subject": o["subject"]})
    assert back == mmlu
    write_bytes(os.path.join(data, "keys.txt"), ("\n".join(KEYS) + "\n").encode("utf-8"))


def write_mc(out, docs):
    lines = [json.dumps(d, ensure_ascii=False) for d in docs]
    write_bytes(os.path.join(out, "data", "mc.jsonl"), ("\n".join(lines) + "\n").encode("utf-8"))


# =============================================================================================
# 5. Requests: what each harness asks the model, as lm-eval builds it
#    A doc is {"task", "doc_id", "arguments": [(context, continuation)], "target", "choices"}.


def mmlu_requests(mmlu, shots):
    docs = []
    for subject in sorted(MMLU_SUBJECTS):
        dev, test = mmlu[(subject, "dev")], mmlu[(subject, "test")]
        for i, doc in enumerate(test):
            ctx = mmlu_context(subject, dev, doc, shots)
            docs.append({"task": "mmlu_" + subject, "doc_id": i, "target": doc["answer"],
                         "arguments": [(ctx, " " + letter) for letter in ["A", "B", "C", "D"]],
                         "choices": ["A", "B", "C", "D"]})
    return docs


def mc_requests(mc_docs):
    return [{"task": "mc", "doc_id": i, "target": d["gold"], "choices": d["choices"],
             "arguments": [(d["context"], " " + c) for c in d["choices"]]} for i, d in enumerate(mc_docs)]


def kv_requests(masked):
    docs = []
    for n in KV_PAIRS:
        for suffix in ([""] + (["_masked"] if masked else [])):
            for s in range(KV_SAMPLES):
                prompt, choices, gold = kv_sample(KEYS, n, s, KV_SEED)
                docs.append({"task": f"kv_pairs_{n}{suffix}", "doc_id": s, "target": gold, "choices": choices,
                             "arguments": [(prompt, c) for c in choices], "masked": bool(suffix)})
    return docs


def encode_pair(tok, context, continuation, special):
    """TemplateLM._encode_pair for a causal model: trailing whitespace (str.rstrip) of the context moves to
    the continuation; continuation tokens = encode(context + continuation)[len(encode(context)):]"""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces > 0:
        continuation = context[-n_spaces:] + continuation
        context = context[:-n_spaces]
    whole = tok.encode(context + continuation, add_special_tokens=special).ids
    ctx = tok.encode(context, add_special_tokens=special).ids
    return ctx, whole[len(ctx):]


# =============================================================================================
# 6. lm-eval's aggregation (lm_eval/api/metrics.py, evaluator_utils.py)


def mean(arr):
    return sum(arr) / len(arr)


def sample_stddev(arr):
    mu = mean(arr)
    return math.sqrt(sum([(x - mu) ** 2 for x in arr]) / (len(arr) - 1))


def mean_stderr(arr):
    return sample_stddev(arr) / math.sqrt(len(arr))


def pooled_sample_stderr(stderrs, sizes):
    assert len(stderrs) == len(sizes)
    pooled_sample_var = (sum([(size - 1) * stderr ** 2 * size for size, stderr in zip(sizes, stderrs)])
                         / (sum(sizes) - len(sizes)))
    return math.sqrt(pooled_sample_var / sum(sizes))  # np.sqrt in lm-eval: the same correctly rounded root


def aggregate_subtask_metrics(metrics, sizes):  # weight_by_size: True
    return sum([metric * size for metric, size in zip(metrics, sizes)]) / sum(sizes)


def task_results(items, metrics):
    r = {}
    for m in metrics:
        vals = [it[m] for it in items]
        r[f"{m},none"] = mean(vals)
        r[f"{m}_stderr,none"] = mean_stderr(vals) if len(vals) > 1 else "N/A"
    return r


def results_of(logged):
    by_task = {}
    for line in logged:
        by_task.setdefault(line["task"], []).append(line)
    results = {}
    for task, items in by_task.items():
        results[task] = task_results(items, ["acc", "acc_norm"] if task == "mc" else ["acc"])
    subjects = sorted(t[len("mmlu_"):] for t in by_task if t.startswith("mmlu_"))
    if subjects:
        leaves_of = {}
        for cat in MMLU_CATEGORIES:
            leaves = [s for s in subjects if MMLU_SUBJECTS[s] == cat]
            if leaves:
                leaves_of["mmlu_" + cat] = leaves
        leaves_of["mmlu"] = [s for cat in MMLU_CATEGORIES for s in subjects if MMLU_SUBJECTS[s] == cat]
        for group, leaves in leaves_of.items():
            accs = [results["mmlu_" + s]["acc,none"] for s in leaves]
            stderrs = [results["mmlu_" + s]["acc_stderr,none"] for s in leaves]
            sizes = [len(by_task["mmlu_" + s]) for s in leaves]
            results[group] = {"acc,none": aggregate_subtask_metrics(accs, sizes),
                              "acc_stderr,none": "N/A" if "N/A" in stderrs else pooled_sample_stderr(stderrs, sizes)}
    return results


def self_test_aggregation():
    # pooled_sample_stderr of one task is that task's stderr
    a = [1.0, 0.0, 0.0, 1.0, 1.0]
    assert abs(pooled_sample_stderr([mean_stderr(a)], [5]) - mean_stderr(a)) < 1e-15
    # the sample stddev of 0/1 items with k ones in n: sqrt(k (n-k) / (n (n-1)))
    assert abs(sample_stddev(a) - math.sqrt(3 * 2 / (5 * 4))) < 1e-15


# =============================================================================================
# 7. Models and float64 scoring


def build_checkpoints(out):
    import torch
    import make_fixtures as mf
    llama = dict(vocab_size=128256, hidden_size=8, intermediate_size=16, num_hidden_layers=2, num_attention_heads=2,
                 num_key_value_heads=1, max_position_embeddings=131072, rms_norm_eps=1e-5, tie_word_embeddings=True,
                 bos_token_id=128000, eos_token_id=128001,
                 rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                                  "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})
    mamba2 = dict(vocab_size=1500, hidden_size=16, expand=2, num_heads=4, head_dim=8, state_size=8, n_groups=1,
                  num_hidden_layers=2, conv_kernel=4, chunk_size=16, use_bias=False, use_conv_bias=True,
                  layer_norm_epsilon=1e-5, residual_in_fp32=True, tie_word_embeddings=True)
    paths = {}
    for name, family, cfg, seed in [("llama3_tiny", "llama", llama, LLAMA_SEED), ("mamba2_tiny", "mamba2", mamba2, MAMBA2_SEED)]:
        path = os.path.join(out, name)
        shutil.rmtree(path, ignore_errors=True)
        model = mf.build(family, cfg, seed).to(torch.bfloat16)
        model.save_pretrained(path)
        paths[family] = path
    shutil.copyfile(FALCON_TOKENIZER, os.path.join(paths["mamba2"], "tokenizer.json"))
    with open(os.path.join(paths["llama"], "NOTE.txt"), "w") as f:
        f.write("The tokenizer of this checkpoint is the real Llama-3.1 tokenizer.json, not committed:\n"
                "copy test/.cache/llama3_1/tokenizer.json (make tokenizer-cache; SHA-256\n"
                f"{LLAMA3_TOKENIZER_SHA256}) into a copy of this folder before running gna on it.\n")
    return paths


class Scorer:
    """float64 log-probabilities of a causal model, with gna's --mask head ablations as forward pre-hooks
    (make_intervention_fixtures.ablation_hook) on the output projection's input"""

    def __init__(self, family, path):
        import make_fixtures as mf
        self.family = family
        self.model = mf.load_f64(family, path)
        if family == "llama":
            self.model.config._attn_implementation = "eager"
        self.cache = {}

    def forward(self, inp, spec):
        import torch
        import make_fixtures as mf
        import make_intervention_fixtures as mi
        model, family = self.model, self.family
        ids = torch.tensor([inp])
        T = len(inp)
        hooks = []
        if spec:
            n_layers = model.config.num_hidden_layers
            heads = model.config.num_attention_heads if family == "llama" else model.config.num_heads
            items = mi.parse_spec(spec, family, model, n_layers, lambda l, k: heads, T)
            assert items
            for (l, kind, h, queries, keys) in items:
                assert keys is None, spec
                _, mixer, o_attn, o_ssm = mi.modules(family, model, l)
                proj = o_attn if kind == "A" else o_ssm
                hooks.append(proj.register_forward_pre_hook(
                    mi.ablation_hook([(h, queries)], mi.head_width(family, model, kind, mixer))))
        try:
            logits = mf.forward_f64(model, ids)
        finally:
            for hk in hooks:
                hk.remove()
        assert logits.shape[0] == T
        return logits

    def check_mask(self, inp, spec):
        """the ablation changes the last row; with @-1 it leaves every other row as it was"""
        plain, masked = self.forward(inp, None), self.forward(inp, spec)
        assert (plain[-1] - masked[-1]).abs().max().item() > 1e-6, f"{spec} changed nothing"
        if spec.endswith("@-1"):
            assert (plain[:-1] - masked[:-1]).abs().max().item() < 1e-12, f"{spec} changed rows before the last"
        else:
            assert (plain[:-1] - masked[:-1]).abs().max().item() > 1e-6, f"{spec} changed only the last row"

    def logprobs(self, inp, spec, first_row):
        """log_softmax of the logits at rows first_row.. of the input, float64 [R, V]"""
        import torch
        key = (tuple(inp), spec, first_row)
        if key not in self.cache:
            self.cache = {}  # one entry: the choices of a doc share an input, docs do not
            logits = self.forward(inp, spec)
            self.cache[key] = torch.log_softmax(logits[first_row:], dim=-1)
        return self.cache[key]


def score_doc(scorer, tok, doc, special, spec, authors_check=False):
    """lm-eval's _loglikelihood_tokens for each (context, continuation) of the doc, and process_results"""
    import torch
    ctx_encs, cont_encs, lls, greedy = [], [], [], []
    gaps = []           # per continuation token: |log p(token) - best other log p|, how near is_greedy is to flipping
    boundary_merges = 0
    authors = []
    for context, continuation in doc["arguments"]:
        assert context != ""  # lm-eval scores an empty context against the prefix token instead; none here
        ctx, cont = encode_pair(tok, context, continuation, special)
        assert len(ctx) > 0 and len(cont) > 0
        inp = (ctx + cont)[:-1]
        assert len(inp) < 2048, "past lm-eval's default max_length: it would truncate from the left"
        first = len(ctx) - 1                      # row predicting cont[0]
        first_row = max(first - 1, 0) if authors_check else first
        lp = scorer.logprobs(inp, spec, first_row)
        rows = lp[first - first_row:]
        assert rows.shape[0] == len(cont)
        toks = torch.tensor(cont)
        picked = rows[torch.arange(len(cont)), toks]
        lls.append(float(picked.sum()))
        greedy.append(bool((rows.argmax(dim=-1) == toks).all()))
        for r, t in zip(rows, cont):
            others = r.clone()
            others[t] = -float("inf")
            gaps.append(abs(float(r[t] - others.max())))
        ctx_encs.append(ctx)
        cont_encs.append(cont)
        whole = tok.encode(context + continuation, add_special_tokens=special).ids
        if whole[:len(ctx)] != ctx:   # a token spans the boundary; lm-eval splits at len(ctx) all the same
            boundary_merges += 1
        if authors_check:
            # kv_retrieval.py logprob_of_sequence: full = tokenizer(prompt + c) (special tokens on), start =
            # len(tokenizer(prompt, add_special_tokens=False)), sum_{j=start}^{len-1} log p(full[j] | full[:j])
            full = tok.encode(context + continuation, add_special_tokens=True).ids
            start = len(tok.encode(context, add_special_tokens=False).ids)
            assert full == ctx + cont and start >= 1
            s = 0.0
            for j in range(start, len(full)):
                s += float(lp[j - 1 - first_row, full[j]])
            authors.append(s)
    assert all(c == ctx_encs[0] for c in ctx_encs)  # the context (whitespace moved out) is the same for every choice
    pred = max(range(len(lls)), key=lambda i: lls[i])                      # np.argmax: the first maximum
    line = {"task": doc["task"], "doc_id": doc["doc_id"], "arguments": [list(a) for a in doc["arguments"]],
            "context_tokens": ctx_encs[0], "continuation_tokens": cont_encs, "lls": lls, "is_greedy": greedy,
            "target": doc["target"], "acc": 1.0 if pred == doc["target"] else 0.0}
    info = {"pred": pred, "gaps": gaps, "boundary_merges": boundary_merges,
            "margin": top2_margin(lls)}
    if doc["task"] == "mc":
        lens = [float(len(c)) for c in doc["choices"]]                      # characters (code points), no delimiter
        assert all(n > 0 for n in lens)
        normed = [ll / n for ll, n in zip(lls, lens)]
        pred_norm = max(range(len(normed)), key=lambda i: normed[i])
        line["acc_norm"] = 1.0 if pred_norm == doc["target"] else 0.0
        byte_normed = [ll / len(c.encode("utf-8")) for ll, c in zip(lls, doc["choices"])]
        info.update(pred_norm=pred_norm, norm_margin=top2_margin(normed),
                    pred_norm_bytes=max(range(len(byte_normed)), key=lambda i: byte_normed[i]))
    if authors_check:
        apred = max(range(len(authors)), key=lambda i: authors[i])
        assert apred == pred, ("the authors' sum picks another value", authors, lls)
        offsets = [a - l for a, l in zip(authors, lls)]
        # the authors' sum adds log p(last prompt token) when the tokenizer adds BOS, the same for every choice
        assert max(offsets) - min(offsets) < 1e-9, offsets
        if len(ctx_encs[0]) == start:  # no BOS: the two sums are the same
            assert max(abs(o) for o in offsets) < 1e-9, offsets
    return line, info


def top2_margin(values):
    if len(values) < 2:
        return float("inf")
    s = sorted(values, reverse=True)
    return s[0] - s[1]


# =============================================================================================
# 8. The cases


def data_rel(out, *parts):
    """a path in command.txt: relative to the repository root. OUT outside the repository (say $OUT of a
    remote run, copied back later) is taken to be test/fixtures/harness."""
    rel = os.path.relpath(out, ROOT)
    if rel.startswith("..") or os.path.isabs(rel):
        rel = os.path.join("test", "fixtures", "harness")
    return "/".join([rel.replace(os.sep, "/")] + list(parts))


def cases(out):
    mmlu_dir = data_rel(out, "data", "mmlu")
    mmlu_jsonl = data_rel(out, "data", "mmlu.jsonl")
    mc = data_rel(out, "data", "mc.jsonl")
    keys = data_rel(out, "data", "keys.txt")
    mamba2 = data_rel(out, "mamba2_tiny")
    kv = f"--keys {keys} --pairs {','.join(map(str, KV_PAIRS))} --samples {KV_SAMPLES} --seed {KV_SEED}"
    # name, family, harness, shots, bos, mask, command
    return [
        ("mmlu_0shot", "llama", "mmlu", 0, False, None, f"mmlu -m MODEL_LLAMA3 --data {mmlu_dir} --shots 0"),
        ("mmlu_5shot", "llama", "mmlu", 5, False, None, f"mmlu -m MODEL_LLAMA3 --data {mmlu_dir} --shots 5"),
        ("mmlu_jsonl_0shot", "llama", "mmlu", 0, False, None, f"mmlu -m MODEL_LLAMA3 --data {mmlu_jsonl} --shots 0"),
        ("mmlu_1shot_bos", "llama", "mmlu", 1, True, None, f"mmlu -m MODEL_LLAMA3 --data {mmlu_dir} --shots 1 --bos"),
        ("mmlu_mamba2_5shot", "mamba2", "mmlu", 5, False, None, f"mmlu -m {mamba2} --data {mmlu_dir} --shots 5"),
        ("mmlu_mask", "llama", "mmlu", 5, False, "L1H0", f"mmlu -m MODEL_LLAMA3 --data {mmlu_dir} --shots 5 --mask L1H0"),
        ("mmlu_mask_last", "llama", "mmlu", 2, False, "L1H0@-1",
         f"mmlu -m MODEL_LLAMA3 --data {mmlu_dir} --shots 2 --mask L1H0@-1"),
        ("mmlu_mamba2_mask_last", "mamba2", "mmlu", 0, False, "L1H1@-1",
         f"mmlu -m {mamba2} --data {mmlu_dir} --shots 0 --mask L1H1@-1"),
        ("mc", "llama", "mc", None, False, None, f"mc -m MODEL_LLAMA3 --data {mc}"),
        ("kv_llama3", "llama", "kv", None, True, None, f"kv -m MODEL_LLAMA3 {kv}"),
        ("kv_mamba2", "mamba2", "kv", None, True, None, f"kv -m {mamba2} {kv}"),
        ("kv_mask", "llama", "kv", None, True, "L1H0", f"kv -m MODEL_LLAMA3 {kv} --mask L1H0"),
    ]


# =============================================================================================
# 9. `gna heads`: every head's G&A scores over the contexts, and the task's accuracy under the ablations
#    gna picks from them (gna.c, "G&A head discovery"). Independent of gna: the prompts come from the
#    functions above, the segments from the prompt text, the attention rows from transformers (eager
#    attention weights; for Mamba-2 heads the implicit attention matrix recomputed from the mixer's
#    weights, make_intervention_fixtures.ssd_matrix), all in float64.

HEADS_KV = {"pairs": 4, "samples": 6, "seed": 3}
HEADS_MMLU_SHOTS = 1
HEADS_TOP = 2
GNA_C = os.path.join(ROOT, "gna.c")


def heads_cases(out):
    mmlu_dir = data_rel(out, "data", "mmlu")
    mamba2 = data_rel(out, "mamba2_tiny")
    kv = f"--task kv --pairs {HEADS_KV['pairs']} --samples {HEADS_KV['samples']} --seed {HEADS_KV['seed']} --top {HEADS_TOP}"
    # name, family, task, command
    return [
        ("heads_kv_llama3", "llama", "kv", f"heads -m MODEL_LLAMA3 {kv}"),
        ("heads_kv_mamba2", "mamba2", "kv", f"heads -m {mamba2} {kv}"),
        ("heads_mmlu_llama3", "llama", "mmlu",
         f"heads -m MODEL_LLAMA3 --task mmlu --data {mmlu_dir} --shots {HEADS_MMLU_SHOTS} --top {HEADS_TOP}"),
    ]


def gna_kv_keys():
    """gna's built-in key list (`gna kv` without --keys, `gna heads --task kv`): the string literals
    between the marker comments /* kv-keys-begin */ and /* kv-keys-end */ of gna.c"""
    import re
    with open(GNA_C, encoding="utf-8") as f:
        text = f.read()
    begin = text.index("/* kv-keys-begin */") + len("/* kv-keys-begin */")
    end = text.index("/* kv-keys-end */", begin)
    body = text[begin:end]
    keys = re.findall(r'"([^"\\]*)"', body)
    assert keys and len(set(keys)) == len(keys), "gna's key list: empty or not distinct"
    assert all(re.fullmatch(r"[a-z]+", k) for k in keys), keys
    # nothing but the literals, commas, white space and the closing brace between the markers
    assert re.fullmatch(r'[\s,]*(?:"[a-z]+"[\s,]*)+\}\s*;\s*', body), "unexpected text between gna.c's key markers"
    return keys


def heads_questions(task, mmlu):
    """gna heads' questions: score_doc's docs, each with "context" and "segments" [(start, end)], character
    offsets into the context: kv's "key:value\\n" lines; mmlu's option lines "A. <choice>\\n" of the final
    question (the context ends with them and "Answer:")"""
    docs = []
    if task == "kv":
        keys, n = gna_kv_keys(), HEADS_KV["pairs"]
        header = "Memorize the following dictionary:\n"
        for s in range(HEADS_KV["samples"]):
            prompt, choices, gold = kv_sample(keys, n, s, HEADS_KV["seed"])
            assert prompt.startswith(header)
            lines = prompt[len(header):].split("\n")
            assert len(lines) == n + 1
            segments, at, names = [], len(header), []
            for line, value in zip(lines[:n], choices):
                key, colon, v = line.partition(":")
                assert colon and v == value and key in keys, (line, value)
                names.append(key)
                segments.append((at, at + len(line) + 1))
                at += len(line) + 1
            assert prompt[at:] == f"The value of the key '{names[gold]}' is" and len(set(names)) == n
            docs.append({"task": f"kv_pairs_{n}", "doc_id": s, "target": gold, "choices": choices,
                         "arguments": [(prompt, c) for c in choices], "context": prompt, "segments": segments})
        return docs
    for doc in mmlu_requests(mmlu, HEADS_MMLU_SHOTS):
        subject = doc["task"][len("mmlu_"):]
        choices = mmlu[(subject, "test")][doc["doc_id"]]["choices"]
        context = doc["arguments"][0][0]
        assert all(a[0] == context for a in doc["arguments"])
        options = "".join(f"{letter}. {c}\n" for letter, c in zip("ABCD", choices))
        assert context.endswith("\n" + options + "Answer:"), context
        at = len(context) - len("Answer:") - len(options)
        segments = []
        for letter, c in zip("ABCD", choices):
            segments.append((at, at + len(f"{letter}. {c}\n")))
            at = segments[-1][1]
        docs.append(dict(doc, context=context, segments=segments))
    return docs


def segment_token_spans(tok, context, segments, special):
    """the context's tokens (trailing white space moved off, as _encode_pair does) and each segment's token
    span [start, end): len(encode(context[:start])), len(encode(context[:end])), each a prefix of the context's"""
    kept = context.rstrip()
    ids = tok.encode(kept, add_special_tokens=special).ids
    spans = []
    for a, b in segments:
        assert 0 < a < b < len(kept) and context[b - 1] == "\n"
        sides = []
        for offset in (a, b):
            prefix = tok.encode(context[:offset], add_special_tokens=special).ids
            assert ids[:len(prefix)] == prefix, ("a segment does not end on a token boundary", context[:offset])
            sides.append(len(prefix))
        assert sides[0] < sides[1] < len(ids)
        spans.append(tuple(sides))
    return ids, spans


def head_rows(scorer, ids, rows):
    """{(layer, head): float64 [len(rows), T]}: each head's attention distribution at the query positions
    `rows`: softmax probabilities (transformers' eager attention weights), or for Mamba-2 heads
    |M[t, :]| / sum |M[t, :]| with M the implicit attention matrix (C_t . B_s) exp(A sum dt) dt_s; the second
    value is the largest |y - (M x + D x)| over the Mamba-2 mixers' outputs (M checked against the scan)"""
    import torch
    import make_fixtures as mf
    import make_intervention_fixtures as mi
    model, family = scorer.model, scorer.family
    T = len(ids)
    index = torch.tensor(rows)
    out, check = {}, 0.0
    if family == "llama":
        captured, hooks = {}, []
        for l, layer in enumerate(model.model.layers):
            hooks.append(layer.self_attn.register_forward_hook(
                lambda mod, args, o, l=l: captured.__setitem__(l, o[1] if isinstance(o, tuple) and len(o) > 1 else None)))
        try:
            with mf.Float64Everywhere() as mode:
                result = model(torch.tensor([ids]), use_cache=False, output_attentions=True)
        finally:
            for hk in hooks:
                hk.remove()
        assert not mode.low_precision_ops, sorted(mode.low_precision_ops)
        attentions = getattr(result, "attentions", None)
        for l in range(model.config.num_hidden_layers):
            w = attentions[l] if attentions is not None else captured.get(l)
            assert w is not None, "no attention weights: not eager attention?"
            assert w.dtype == torch.float64 and w.shape == (1, model.config.num_attention_heads, T, T), w.shape
            for h in range(w.shape[1]):
                r = w[0, h][index]
                assert (r.sum(dim=-1) - 1).abs().max().item() < 1e-12
                assert r.min().item() >= 0
                for i, t in enumerate(rows):
                    assert t + 1 == T or r[i, t + 1:].abs().max().item() <= 1e-300  # causal
                out[(l, h)] = r
        return out, check
    captured, pre_norm, hooks = {}, {}, []
    mixers = [layer.mixer for layer in model.backbone.layers]
    for l, mixer in enumerate(mixers):
        hooks.append(mixer.in_proj.register_forward_hook(
            lambda mod, args, o, l=l: captured.__setitem__(l, (o[0] if o.dim() == 3 else o).clone())))
        hooks.append(mixer.norm.register_forward_pre_hook(
            lambda mod, args, l=l: pre_norm.__setitem__(l, args[0][0].clone() if args else None)))
    try:
        with mf.Float64Everywhere() as mode:
            model(torch.tensor([ids]), use_cache=False)
    finally:
        for hk in hooks:
            hk.remove()
    assert not mode.low_precision_ops, sorted(mode.low_precision_ops)
    for l, mixer in enumerate(mixers):   # float64 tensors and weights: float64 arithmetic
        x, B, C, dt, A, D, z = mi.ssd_internals("mamba2", mixer, captured[l])
        assert x.dtype == torch.float64 and dt.dtype == torch.float64
        H, P = x.shape[1], x.shape[2]
        for h in range(H):
            M = mi.ssd_matrix(x, B, C, dt, A, h, True)
            if pre_norm.get(l) is not None:
                y = M @ x[:, h] + D[h] * x[:, h]
                got = pre_norm[l][:, h * P:(h + 1) * P]
                check = max(check, (y - got).abs().max().item() / max(got.abs().max().item(), 1e-300))
            else:
                check = float("nan")
            a = M[index].abs()
            out[(l, h)] = a / a.sum(dim=-1, keepdim=True)
    return out, check


def json_number(x):
    """gna's json_add_number: null when not finite, %.1f for integers below 1e15, else %.17g"""
    if x is None or not math.isfinite(x):
        return "null"
    if x == math.floor(x) and abs(x) < 1e15:
        return "%.1f" % x
    return "%.17g" % x


def heads_json(task, n_questions, accuracy, heads, by_aggregate, pairs):
    """the layout of `gna heads --json` byte for byte"""
    s = '{\n  "task": ' + json.dumps(task) + f',\n  "questions": {n_questions},\n  "accuracy": ' + json_number(accuracy)
    s += ',\n  "heads": ['
    for k, i in enumerate(by_aggregate):
        x = heads[i]
        s += (("," if k else "") + f'\n    {{"head": "{x["name"]}", "aggregate": {json_number(x["aggregate"])}, '
              f'"gold_mass": {json_number(x["gold_mass"])}, "gather": {json_number(x["gather"])}, '
              f'"ablated_accuracy": {json_number(x["ablated_accuracy"])}}}')
    s += '\n  ],\n  "pairs": ['
    worst = None
    for p, pair in enumerate(pairs):
        if worst is None or pair["accuracy"] < pairs[worst]["accuracy"]:
            worst = p
    for p, pair in enumerate(pairs):
        s += (("," if p else "") + f'\n    {{"gather": "{heads[pair["gather"]]["name"]}", '
              f'"aggregate": "{heads[pair["aggregate"]]["name"]}", "ablated_accuracy": {json_number(pair["accuracy"])}, '
              f'"top_scored": {"true" if p == 0 else "false"}, "most_harmful": {"true" if p == worst else "false"}}}')
    return s + "\n  ]\n}\n"


def ranked(heads, key):
    """head indices by score, descending; ties by the lower index (gna's head order: layer-major, head-minor)"""
    return sorted(range(len(heads)), key=lambda i: (-heads[i][key], i))


def ranking_gaps(heads, order, top):
    """the smallest gap between consecutive scores over the whole ranking, and over ranks 1..top+1 (the gaps
    that decide which heads are the top candidates and in which order)"""
    scores = [heads[i] for i in order]
    gaps = [scores[r] - scores[r + 1] for r in range(len(scores) - 1)]
    return (min(gaps) if gaps else float("inf")), (min(gaps[:top]) if gaps[:top] else float("inf"))


def run_heads_case(scorer, tok, family, task, mmlu):
    """(the expected_heads.json text, the MANIFEST line's details)"""
    docs = heads_questions(task, mmlu)
    special = task == "kv"   # kv: the authors' tokenizer call adds BOS; mmlu without --bos adds nothing
    cfg = scorer.model.config
    n_layers = cfg.num_hidden_layers
    n_heads = cfg.num_attention_heads if family == "llama" else cfg.num_heads
    heads = [{"layer": l, "head": h, "name": f"L{l}H{h}", "aggregate": 0.0, "gold_mass": 0.0, "gather": 0.0,
              "ablated_accuracy": float("nan")} for l in range(n_layers) for h in range(n_heads)]
    ssm_check = 0.0
    for doc in docs:
        ids, spans = segment_token_spans(tok, doc["context"], doc["segments"], special)
        ctx, _ = encode_pair(tok, *doc["arguments"][0], special)
        assert ids == ctx  # the tokens score_doc's requests start with
        T, m, gold = len(ids), len(spans), doc["target"]
        rows = [end - 1 for _, end in spans] + [T - 1]     # the summary tokens, then the final position
        maps, check = head_rows(scorer, ids, rows)
        ssm_check = max(ssm_check, check) if not math.isnan(check) else check
        for x in heads:
            r = maps[(x["layer"], x["head"])]
            final = r[m]   # its mass on each whole segment (summary token included)
            masses = [float(final[s:e].sum()) for s, e in spans]
            g = masses[gold]
            best_other = max(masses[j] for j in range(m) if j != gold)
            gather = sum(float(r[j, s:e - 1].sum()) for j, (s, e) in enumerate(spans)) / m
            x["aggregate"] += g - best_other
            x["gold_mass"] += g
            x["gather"] += gather
    for x in heads:
        for k in ("aggregate", "gold_mass", "gather"):
            x[k] /= len(docs)

    margins = []

    def accuracy(spec):
        correct = 0
        for doc in docs:
            line, info = score_doc(scorer, tok, doc, special, spec)
            correct += line["acc"] == 1.0
            margins.append(info["margin"])
        return correct / len(docs)

    plain = accuracy(None)
    K = min(HEADS_TOP, len(heads))
    by_aggregate, by_gather = ranked(heads, "aggregate"), ranked(heads, "gather")
    for i in by_aggregate[:K] + by_gather[:K]:
        if math.isnan(heads[i]["ablated_accuracy"]):
            heads[i]["ablated_accuracy"] = accuracy(heads[i]["name"])
    pairs = []
    for a in by_aggregate[:K]:
        for g in by_gather[:K]:
            if heads[g]["layer"] < heads[a]["layer"]:
                spec = f"{heads[g]['name']},{heads[a]['name']}"
                pairs.append({"gather": g, "aggregate": a, "accuracy": accuracy(spec)})
    text = heads_json(task, len(docs), plain, heads, by_aggregate, pairs)
    info = {"questions": len(docs), "heads": len(heads), "accuracy": plain, "K": K,
            "aggregate_gaps": ranking_gaps([x["aggregate"] for x in heads], by_aggregate, K),
            "gather_gaps": ranking_gaps([x["gather"] for x in heads], by_gather, K),
            "margin": min(margins), "runs": len(margins) // len(docs), "ssm_check": ssm_check,
            "top_aggregate": [heads[i]["name"] for i in by_aggregate[:K]],
            "top_gather": [heads[i]["name"] for i in by_gather[:K]], "pairs": len(pairs)}
    return text, info


def heads_manifest_line(name, info):
    (ga, gad), (gg, ggd) = info["aggregate_gaps"], info["gather_gaps"]
    K = info["K"]
    msg = (f"{name}: {info['questions']} questions, {info['heads']} heads, accuracy {info['accuracy']:.4f}; top {K} "
           f"aggregate {'/'.join(info['top_aggregate'])}, gather {'/'.join(info['top_gather'])}, {info['pairs']} pairs; "
           f"min gap between consecutive aggregate scores {ga:.3e} (ranks 1-{K + 1}: {gad:.3e}), gather {gg:.3e} "
           f"(ranks 1-{K + 1}: {ggd:.3e}); min top-2 ll margin over the {info['runs']} accuracy runs {info['margin']:.3e}")
    if info["ssm_check"]:
        msg += f"; implicit attention M x + D x against the scan: max rel. diff {info['ssm_check']:.1e}"
    if min(gad, ggd) < 1e-6:
        msg += "  WARNING: a near tie among the top ranks: the candidates (or their order) are ambiguous"
    elif min(ga, gg) < 1e-6:
        msg += "  (a near tie below rank {}: it does not change the candidates)".format(K + 1)
    if info["margin"] < 1e-3:
        msg += "  WARNING: a near tie in an answer; float32 rounding could flip an accuracy"
    return msg


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def dir_bytes(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(dirpath, name))
    return total


README = """# Harness fixtures

Golden data for `gna mmlu`, `gna mc`, `gna kv` and `gna heads`, made by

    python3 weights_tools/make_harness_fixtures.py test/fixtures/harness

(torch, transformers, tokenizers, safetensors, numpy; the real Llama-3.1 tokenizer in
test/.cache/llama3_1/tokenizer.json, from `make tokenizer-cache`). The expected values are float64
computations on the CPU that follow lm-evaluation-harness 0.4.7's code (the G&A paper's version) and,
for `kv`, the paper's authors' KV-retrieval prompt and scoring with gna's seeded sampling. The script's
docstring names the lm-eval functions mirrored.

- `llama3_tiny/`: random-weight LlamaForCausalLM (bf16, hidden 8, 2 layers, 2 heads, 1 kv head, tied
  embeddings) over Llama-3.1's vocabulary. Its tokenizer.json is not committed: a test copies
  test/.cache/llama3_1/tokenizer.json into a copy of the folder (NOTE.txt). `MODEL_LLAMA3` in
  command.txt stands for that copy.
- `mamba2_tiny/`: random-weight Mamba2ForCausalLM (bf16, hidden 16, 2 layers, 4 heads of 8) with the
  1500-token Falcon-pipeline tokenizer of test/fixtures/tokenizers/falcon.
- `data/mmlu/{dev,test}/*.csv`: three subjects in MMLU's CSV layout (no header; question, A, B, C, D,
  answer letter), hand-written bytes with CSV corner cases (CRLF, BOM, quoted commas, doubled quotes,
  line breaks in quotes, no final line break, non-ASCII, an empty choice, spaces around a question).
- `data/mmlu.jsonl`: the same questions, `{"subject", "split", "question", "choices", "answer"}`.
- `data/mc.jsonl`: generic multiple choice `{"context", "choices", "gold"}`.
- `data/keys.txt`: the key words for `gna kv --keys`.
- `cases/<name>/command.txt`: gna's arguments (paths relative to the repository root);
  `expected_log.jsonl`: one line per (task, doc_id) with the arguments, the context and continuation
  token ids, the float64 log-likelihoods, is_greedy, target and acc (acc_norm for mc);
  `expected_results.json`: lm-eval's aggregate metrics (`"acc,none"`, `"acc_stderr,none"`, groups
  `mmlu_<category>` and `mmlu`).
- `cases/heads_<name>/`: `gna heads` cases: command.txt and `expected_heads.json` in the layout of
  `gna heads --json`: the task's accuracy, every head's aggregate, gold mass and gather scores (float64
  means over the questions of its attention rows: eager softmax weights, or a Mamba-2 head's
  |implicit attention| normalised; kv with gna's built-in key list, parsed from gna.c), its accuracy
  when ablated (for gna's top candidates, null elsewhere), and the gather -> aggregate pairs.
- `MANIFEST.txt`: library versions, seeds, and per case the smallest decision margins, so a near tie
  (where float32 rounding could flip an answer) is visible; for `gna heads` also the smallest gaps
  between consecutive scores of each ranking (a near tie there makes the candidates ambiguous).

## `gna knowledge` and `gna gsm8k`

Golden data for `gna knowledge` (lm-evaluation-harness 0.4.7's arc_challenge, arc_easy, hellaswag, openbookqa,
piqa and winogrande, 0-shot; the G&A paper's knowledge control is the plain mean of the six accs) and
`gna gsm8k` (lm-eval's gsm8k: generate_until with greedy decoding, the strict-match and flexible-extract
filters, exact_match), made by

    python3 weights_tools/make_task_fixtures.py test/fixtures/harness [--families F,..] [--cases C,..]

(the libraries above; llama3_tiny/ and mamba2_tiny/ must exist, from make_harness_fixtures.py). With
`--data-only` it needs only the standard library, and jinja2, PyYAML and numpy for its cross-check: it writes the
data, gsm8k_filters.jsonl, python_random.jsonl and each case's command.txt and expected_requests.jsonl, and
renders every row and case through lm-eval 0.4.7's own code (its yamls with jinja2 as lm_eval/utils.py
apply_template does, ConfigurableTask's doc_to_* / fewshot_context / construct_requests / process_results,
ContextSampler, RegexFilter, exact_match_hf_evaluate, hellaswag/utils.py, preprocess_winogrande.py), read
from an lm-eval mirror at run time, asserting byte-identical prompts and equal metrics. Real task data comes
from `python3 weights_tools/export_tasks.py FOLDER` (the `datasets` package and the network).

- `data/tasks/<task>.jsonl`: 5-6 hand-written rows per task in its Hugging Face dataset's schema, one JSON
  object a line (a few lines with \\u escapes, a few with their keys in another order): ARC labels "A"-"E"
  and "1"-"5", 3 and 5 choices, choices with quotes, a backslash, a tab and a line break; OpenBookQA answer
  keys with leading spaces and a no-break space (lm-eval lstrip()s them), a stem ending in a space; PIQA
  labels 0 and 1, a solution with a leading space, jinja-like text; HellaSwag's WikiHow brackets
  ("[header]", " [title]" -> ". ", "[step]", nested, unclosed, across "\\n" (kept) and across "\\r"
  (removed)), double and triple spaces, spaces around fields, a ctx_b that capitalize() changes beyond its
  first letter, an empty ctx_b, "ß", "ǆ" and "İ" under capitalize(), capital sigmas at words' ends (final
  sigma), label strings "0"-"3"; Winogrande blanks at the start, before punctuation alone, before spaces
  and a no-break space, before an emoji alone; non-ASCII throughout.
- `data/tasks/gsm8k.jsonl` (8 evaluated rows) and `gsm8k_train.jsonl` (the 30-row few-shot pool: n > 21, so
  random.sample(pool, k <= 5) takes its set method): answers with commas, "$", a negative number, a
  decimal, a trailing period, "#### [INVALID]" (exact_match lowers it to strict-match's fallback
  "[invalid]"), a pool row with an empty answer (its shot adds no " " + answer + "\\n\\n"); evaluated rows 2
  and 5 equal pool rows 3 and 2, which random.Random(1234) draws for them in gsm8k_llama3, gsm8k_zamba2 (its
  one shot dropped: no shots left), gsm8k_mamba2 and gsm8k_small, so the drawn copy is left out.
- `data/tasks_small/`: the same gsm8k.jsonl with a 12-row gsm8k_train.jsonl (n <= 21: sample's pool method).
- `mamba_tiny/`, `falcon_mamba_tiny/`, `zamba2_tiny/`, `llamba_tiny/`: random-weight checkpoints (bf16,
  hidden 16, vocabulary 1500; Llamba padded to 1504 by pad_vocab_size_multiple 8; Zamba2 one shared block
  visited by two hybrid layers) with the Falcon-pipeline tokenizer, built by make_fixtures.build.
  zamba2_tiny's eos_token_id is 387, an ordinary token ("os"), picked from gsm8k_zamba2's greedy
  generations so that they stop: docs 5 and 6 generate it (an EOS stop; the response keeps its text, then
  loses it to the cut at the EOS text), doc 3 generates "posed" (the stop string "os" inside another token).
- `gsm8k_filters.jsonl`: `{"response", "target", "strict-match", "flexible-extract", "exact_match,strict-match",
  "exact_match,flexible-extract"}`: Python's re and str on tricky responses and targets.
- `python_random.jsonl`: `{"seed", "population", "k", "draws"}`: random.Random(seed).sample(range(n), k)
  called six times in a row, for gna's Mersenne Twister and sample (both of its methods).
- `cases/knowledge_<family>/` (llama3, mamba2, mamba, falcon_mamba, zamba2, llamba: all six tasks),
  `knowledge_mask` (`--mask L1H0`, three tasks), `knowledge_limit` (`--limit 2`), `gsm8k_llama3` (5 shots,
  48 new tokens), `gsm8k_mamba2` (2, 32), `gsm8k_small` (3, 16, data/tasks_small), `gsm8k_zamba2` (1, 16):
  command.txt; `expected_requests.jsonl` (task, doc_id, arguments: the prompts alone); `expected_log.jsonl`,
  one line per document (tasks in alphabetical order, rows in file order): for multiple choice the
  arguments, per request the context and continuation token ids (Winogrande's two requests have two
  contexts), float64 log-likelihoods, is_greedy, target (the gold index; for Winogrande the answer's index,
  where lm-eval logs the continuation text), acc, acc_norm (not for winogrande); for gsm8k the arguments
  (context and generation kwargs), the context tokens (no special tokens), the greedy generated tokens
  (float64 argmax, the first maximum, stopping after config.json's eos_token_id or once a stop string of
  "Question:", "</s>", "<|im_end|>" and the EOS token's text is in the decode of the generated tokens, special
  tokens kept), resps (their decode without special tokens, cut at each stop string), filtered_resps,
  target, the two exact_match values and min_gap (the smallest top-1 minus top-2 logit gap over the greedy
  steps); `expected_results.json`: lm-eval's keys (`"alias"`, `"acc,none"`, `"acc_stderr,none"`,
  `"acc_norm,none"`, `"acc_norm_stderr,none"`; `"knowledge"` when all six ran; gsm8k's
  `"exact_match,strict-match"`, `"exact_match_stderr,strict-match"`, `"exact_match,flexible-extract"`,
  `"exact_match_stderr,flexible-extract"`). lm-eval's mean and stderr use Python's sum(), which is compensated
  from Python 3.12 on: under 3.11 a value can differ in its last bit (the results are compared to 1e-9).
- `cases/named_*/`: masks that name positions by what is there (gna.c I.7; the rebuttal's refined Zamba2 mask):
  `named_mmlu_llama3` (1 shot, `--mask L1H0@-1:letters`), `named_mmlu_zamba2` (0 shots, `L*A*@-1:letters`: every
  attention head of both hybrid layers), `named_knowledge_zamba2` (arc_easy and winogrande, `L*A*@-1:letters`:
  those tasks have no marks, so the mask zeroes nothing and the results are knowledge_zamba2's) and
  `named_kv_llama3` (`L1H0@-1:value,L1H1@-1:text=is`), attention heads only. A mark is a part [start, end) of a
  request's context: the option lines "X. <choice>\\n" (`options`) and letters X (`letters`) of the mmlu question
  asked, kv's "key:value\\n" lines (`pairs`), the asked one (`asked`) and its digits (`value`); it holds the
  positions [first, last), first the length of the common prefix of the tokens of context[:start] and the
  context's, last that of context[:end], plus one where a token crosses the end. `text=S` is every input token
  whose text alone, str.strip()ped, is S; @-1 is the input's last position, so with Zamba2's tokenizer, where " B"
  and " C" are two tokens, it is the " " before those letters, not the ":" of "Answer:". Every request runs whole
  with its own positions, the entries zeroed after the softmax (make_intervention_fixtures.patched_eager). Each
  masked document's lines carry `"mask_positions"`, per request `{item as written: [query positions, key
  positions]}` (in expected_requests.jsonl where the tokenizers library made it; kv's unmasked samples have none);
  MANIFEST_tasks.txt shows what each item selected.
- `MANIFEST_tasks.txt` (its own file: make_harness_fixtures.py rewrites MANIFEST.txt): versions, seeds, the
  checkpoints' SHA-256, and per case the smallest margins: top-2 log-likelihoods, acc_norm,
  is_greedy, and for gsm8k the greedy logit gap (a near tie there could change a float32 generation), the
  number of tokens generated and why each generation stopped.
"""


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    data_only = "--data-only" in sys.argv[1:]
    out = os.path.abspath(args[0] if args else os.path.join(ROOT, "test", "fixtures", "harness"))
    os.makedirs(out, exist_ok=True)
    self_test_aggregation()
    mmlu = mmlu_docs_from_csv()
    check_prompts(mmlu)
    write_data(out, mmlu)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(README)
    if data_only:
        write_mc(out, MC_DOCS)
        print(f"data written under {out}; prompts checked")
        return

    sys.path.insert(0, HERE)
    import numpy  # noqa: F401  (make_intervention_fixtures needs it)
    import tokenizers
    import torch
    import transformers
    assert os.path.exists(LLAMA3_TOKENIZER), f"{LLAMA3_TOKENIZER} is missing: run `make tokenizer-cache`"
    assert sha256(LLAMA3_TOKENIZER) == LLAMA3_TOKENIZER_SHA256, "not the pinned Llama-3.1 tokenizer.json"
    toks = {"llama": tokenizers.Tokenizer.from_file(LLAMA3_TOKENIZER),
            "mamba2": tokenizers.Tokenizer.from_file(FALCON_TOKENIZER)}
    assert toks["llama"].encode("x", add_special_tokens=True).ids[0] == 128000  # its post-processor adds BOS
    assert toks["mamba2"].get_vocab_size() == 1500

    paths = build_checkpoints(out)
    scorers = {f: Scorer(f, p) for f, p in paths.items()}
    assert scorers["llama"].model.get_input_embeddings().weight.shape[0] == 128256
    assert scorers["mamba2"].model.get_input_embeddings().weight.shape[0] == 1500

    manifest = [f"made by weights_tools/make_harness_fixtures.py with torch {torch.__version__}, transformers "
                f"{transformers.__version__}, tokenizers {tokenizers.__version__}, python {sys.version.split()[0]}",
                f"seeds: llama3_tiny {LLAMA_SEED}, mamba2_tiny {MAMBA2_SEED} (make_fixtures.randomise); "
                f"kv --seed {KV_SEED}",
                f"tokenizers: llama3 {LLAMA3_TOKENIZER_SHA256} (not committed), falcon {sha256(FALCON_TOKENIZER)}",
                "per case: docs, min top-2 ll margin over docs (argmax decisions), min |log p(token) - best other| "
                "over continuation tokens (is_greedy decisions), accuracy"]
    mc_docs = [dict(d) for d in MC_DOCS]
    for name in [c[0] for c in cases(out)] + [c[0] for c in heads_cases(out)]:  # its own cases only
        shutil.rmtree(os.path.join(out, "cases", name), ignore_errors=True)
    checked_masks = set()
    for name, family, harness, shots, bos, mask, command in cases(out):
        scorer, tok = scorers[family], toks[family]
        if harness == "mmlu":
            docs, special = mmlu_requests(mmlu, shots), bos
        elif harness == "mc":
            docs, special = mc_requests(mc_docs), bos
        else:
            docs, special = kv_requests(mask is not None), True   # the authors' tokenizer call adds BOS
        logged, infos = [], []
        for doc in docs:
            spec = mask if (harness != "kv" or doc.get("masked")) else None
            if spec and (family, spec) not in checked_masks:
                ctx, cont = encode_pair(tok, *doc["arguments"][0], special)
                scorer.check_mask((ctx + cont)[:-1], spec)
                checked_masks.add((family, spec))
            line, info = score_doc(scorer, tok, doc, special, spec, authors_check=harness == "kv")
            logged.append(line)
            infos.append(info)
        if harness == "mc":
            # make acc and acc_norm differ on some doc: if they agree everywhere, move the gold of the first doc
            # whose two predictions differ to the normalised one (the log-likelihoods do not depend on the gold)
            if all(l["acc"] == l["acc_norm"] for l in logged):
                moved = [i for i, inf in enumerate(infos) if inf["pred"] != inf["pred_norm"]]
                assert moved, "acc_norm picks the same choice as acc on every mc doc: change the docs or the seed"
                i = moved[0]
                mc_docs[i]["gold"] = infos[i]["pred_norm"]
                logged[i]["target"] = mc_docs[i]["gold"]
                logged[i]["acc"], logged[i]["acc_norm"] = 0.0, 1.0
                manifest.append(f"  mc: gold of doc {i} set to {mc_docs[i]['gold']} so that acc != acc_norm there")
            write_mc(out, mc_docs)
        results = results_of(logged)
        folder = os.path.join(out, "cases", name)
        os.makedirs(folder)
        with open(os.path.join(folder, "command.txt"), "w") as f:
            f.write(command + "\n")
        with open(os.path.join(folder, "expected_log.jsonl"), "w", encoding="utf-8") as f:
            for line in logged:
                f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        with open(os.path.join(folder, "expected_results.json"), "w", encoding="utf-8") as f:
            f.write(json.dumps({"results": results}, indent=2, ensure_ascii=False) + "\n")
        margin = min(i["margin"] for i in infos)
        gap = min(g for i in infos for g in i["gaps"])
        accs = ", ".join(f"{t} {r['acc,none']:.3f}" for t, r in results.items())
        msg = f"{name}: {len(logged)} docs, min top-2 ll margin {margin:.3e}, min greedy gap {gap:.3e}; {accs}"
        if harness == "mc":
            msg += (f"; min acc_norm margin {min(i['norm_margin'] for i in infos):.3e}, docs where acc_norm picks "
                    f"another choice than acc: {sum(i['pred'] != i['pred_norm'] for i in infos)}, where normalising "
                    f"by UTF-8 bytes instead of characters would pick another: "
                    f"{sum(i['pred_norm'] != i['pred_norm_bytes'] for i in infos)}")
        merges = sum(i["boundary_merges"] for i in infos)
        if merges:
            msg += f"; {merges} requests whose context tokens are not a prefix of the whole's"
        if margin < 1e-3 or gap < 1e-4:
            msg += "  WARNING: a near tie; float32 rounding could flip it"
        print(msg)
        manifest.append(msg)
        if name == "mmlu_0shot":
            zero_shot = (logged, results)
        if name == "mmlu_jsonl_0shot":
            assert (logged, results) == zero_shot  # the same documents, so the same expectations

    manifest.append("gna heads, per case: questions, heads, accuracy, the top candidates, and the smallest gaps between "
                    "consecutive scores of each ranking (a near tie among the top ranks would make the candidates "
                    "ambiguous), min top-2 ll margin over every accuracy run (unablated and each ablation)")
    for name, family, task, command in heads_cases(out):
        import time
        started = time.time()
        text, info = run_heads_case(scorers[family], toks[family], family, task, mmlu)
        folder = os.path.join(out, "cases", name)
        os.makedirs(folder)
        with open(os.path.join(folder, "command.txt"), "w") as f:
            f.write(command + "\n")
        with open(os.path.join(folder, "expected_heads.json"), "w", encoding="utf-8") as f:
            f.write(text)
        msg = heads_manifest_line(name, info)
        print(msg, f"({time.time() - started:.1f} s)")
        manifest.append(msg)

    with open(os.path.join(out, "MANIFEST.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    total = dir_bytes(out)
    print(f"{out}: {total} bytes")
    assert total < MAX_COMMITTED_BYTES, f"{total} bytes: over the {MAX_COMMITTED_BYTES} budget"


if __name__ == "__main__":
    main()
