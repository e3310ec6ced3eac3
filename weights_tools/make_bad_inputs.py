#!/usr/bin/env python3
"""Make gna's bad-input corpus: small broken model folders, each paired with the one-line error that
gna must give for it (exit status 2). Standard library only.

    python3 weights_tools/make_bad_inputs.py test/bad

Writes one folder per broken input and cases.tsv, read by test/run_tests.sh. Each line of cases.tsv is
    name <TAB> expected exit status <TAB> text the error line must contain <TAB> gna arguments
where the arguments may use $BAD (this folder) and $TMP (a scratch folder of the test run). The
folders `good_llama` and `good_mamba` are valid, so that each broken variant fails for the one reason
it was broken for.
"""
import json, os, random, shutil, struct, sys

rng = random.Random(7)


def f32(n):
    return struct.pack(f"<{n}f", *[rng.uniform(-0.5, 0.5) for _ in range(n)])


def safetensors(tensors, header_edit=None):
    """tensors: list of (name, dtype, shape, data bytes). Returns the file bytes."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    if header_edit:
        header_edit(header)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors)


LLAMA_CONFIG = {"model_type": "llama", "vocab_size": 16, "hidden_size": 8, "intermediate_size": 8,
                "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
                "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "rope_scaling": None, "tie_word_embeddings": False,
                "hidden_act": "silu"}


def llama_tensors():
    shapes = [("model.embed_tokens.weight", [16, 8]), ("model.layers.0.input_layernorm.weight", [8]),
              ("model.layers.0.self_attn.q_proj.weight", [8, 8]), ("model.layers.0.self_attn.k_proj.weight", [4, 8]),
              ("model.layers.0.self_attn.v_proj.weight", [4, 8]), ("model.layers.0.self_attn.o_proj.weight", [8, 8]),
              ("model.layers.0.post_attention_layernorm.weight", [8]), ("model.layers.0.mlp.gate_proj.weight", [8, 8]),
              ("model.layers.0.mlp.up_proj.weight", [8, 8]), ("model.layers.0.mlp.down_proj.weight", [8, 8]),
              ("model.norm.weight", [8]), ("lm_head.weight", [16, 8])]
    out = []
    for name, shape in shapes:
        n = 1
        for d in shape:
            n *= d
        out.append((name, "F32", shape, f32(n)))
    return out


MAMBA_CONFIG = {"model_type": "mamba", "vocab_size": 16, "hidden_size": 8, "intermediate_size": 16, "state_size": 4,
                "num_hidden_layers": 1, "conv_kernel": 4, "time_step_rank": 2, "use_bias": False,
                "use_conv_bias": True, "layer_norm_epsilon": 1e-5, "tie_word_embeddings": True}


def mamba_tensors(conv_kernel=4, drop=()):
    shapes = [("backbone.embeddings.weight", [16, 8]), ("backbone.layers.0.norm.weight", [8]),
              ("backbone.layers.0.mixer.in_proj.weight", [32, 8]),
              ("backbone.layers.0.mixer.conv1d.weight", [16, 1, conv_kernel]),
              ("backbone.layers.0.mixer.conv1d.bias", [16]), ("backbone.layers.0.mixer.x_proj.weight", [10, 16]),
              ("backbone.layers.0.mixer.dt_proj.weight", [16, 2]), ("backbone.layers.0.mixer.dt_proj.bias", [16]),
              ("backbone.layers.0.mixer.A_log", [16, 4]), ("backbone.layers.0.mixer.D", [16]),
              ("backbone.layers.0.mixer.out_proj.weight", [8, 16]), ("backbone.norm_f.weight", [8])]
    out = []
    for name, shape in shapes:
        if any(d in name for d in drop):
            continue
        n = 1
        for d in shape:
            n *= d
        out.append((name, "F32", shape, f32(n)))
    return out


# A small SentencePiece-style tokenizer.json (Llama-2's pipeline) whose 16 ids fit good_llama's vocab.
TOKENIZER = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": 1, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True}],
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                       {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
    "pre_tokenizer": None,
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                                 {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": False,
              "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3, "h": 4, "i": 5, "e": 6, "l": 7, "o": 8,
                        "\u2581h": 9, "\u2581hi": 10, "he": 11, "ll": 12, "hell": 13, "\u2581hell": 14, "\u2581hello": 15},
              "merges": ["\u2581 h", "\u2581h i", "h e", "l l", "he ll", "\u2581 hell", "\u2581hell o"]},
}


def tokenizer(edit=None):
    tok = json.loads(json.dumps(TOKENIZER))
    if edit:
        edit(tok)
    return json.dumps(tok, ensure_ascii=False).encode()


def folder(root, name, config, files):
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    if config is not None:
        with open(os.path.join(path, "config.json"), "w") as f:
            f.write(config if isinstance(config, str) else json.dumps(config, indent=1))
    for file_name, data in files.items():
        with open(os.path.join(path, file_name), "wb") as f:
            f.write(data)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "test/bad"
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    cases = []

    def case(name, expected, args, status=2):
        cases.append(f"{name}\t{status}\t{expected or '-'}\t{args}")

    good = safetensors(llama_tensors())
    folder(root, "good_llama", LLAMA_CONFIG, {"model.safetensors": good})
    case("good_llama", "", "logits -q -m $BAD/good_llama --tokens 1,2,15 -o $TMP/good.npy", status=0)
    folder(root, "good_mamba", MAMBA_CONFIG, {"model.safetensors": safetensors(mamba_tensors())})
    case("good_mamba", "", "logits -q -m $BAD/good_mamba --tokens 1,2,15 -o $TMP/good.npy", status=0)

    def broken(name, expected, data=None, config=LLAMA_CONFIG, args="logits -q -m $BAD/{} --tokens 1,2 -o $TMP/out.npy",
               files=None):
        folder(root, name, config, files if files is not None else {"model.safetensors": data})
        case(name, expected, args.format(name))

    # safetensors files
    broken("truncated_data", "run past the end of the data (", good[:-100])
    broken("truncated_to_5_bytes", "truncated: 5 bytes", good[:5])
    broken("header_past_end", "header length 1000000 runs past the end of the file",
           struct.pack("<Q", 1000000) + good[8:])
    broken("header_over_limit", "is over the format's limit", struct.pack("<Q", 1 << 40) + good[8:])
    broken("header_not_json", "model.safetensors: malformed JSON at byte 5: expected ':'",
           struct.pack("<Q", 8) + b'{"a" 1} ' + good[8:])
    broken("header_not_object", "header is not a JSON object", struct.pack("<Q", 8) + b"[1, 2]  " + good[8:])

    def edit(fn):
        return safetensors(llama_tensors(), fn)

    broken("offsets_past_data", "data_offsets [0, 99999] run past the end of the data",
           edit(lambda h: h["model.embed_tokens.weight"].update(data_offsets=[0, 99999])))
    broken("offsets_overlap", "overlap in the data section",
           edit(lambda h: h["model.norm.weight"].update(data_offsets=h["lm_head.weight"]["data_offsets"][:1] +
                                                         [h["lm_head.weight"]["data_offsets"][0] + 32])))
    broken("offsets_size_disagree", "span 36 bytes but shape and dtype need 32",
           edit(lambda h: h["model.norm.weight"].update(
               data_offsets=[h["model.norm.weight"]["data_offsets"][0], h["model.norm.weight"]["data_offsets"][0] + 36])))
    broken("offsets_reversed", "data_offsets must be integers with 0 <= begin <= end",
           edit(lambda h: h["model.norm.weight"].update(data_offsets=[40, 8])))
    broken("unknown_dtype", "has unknown dtype \"F7\"", edit(lambda h: h["model.norm.weight"].update(dtype="F7")))
    broken("entry_without_dtype", "header entry needs dtype, shape and data_offsets",
           edit(lambda h: h["model.norm.weight"].pop("dtype")))
    broken("negative_shape", "shape must hold non-negative integers",
           edit(lambda h: h["model.norm.weight"].update(shape=[-8])))
    t = llama_tensors()
    t[-2] = ("model.norm.weight", "I32", [8], t[-2][3])
    broken("unsupported_dtype_used", "tensor model.norm.weight has dtype I32; gna computes with F32, BF16 and F16",
           safetensors(t))
    t = llama_tensors()
    t[2] = ("model.layers.0.self_attn.q_proj.weight", "F32", [8, 6], f32(48))
    broken("shape_disagrees_with_config",
           "tensor model.layers.0.self_attn.q_proj.weight has shape [8, 6] but config.json implies [8, 8]", safetensors(t))
    broken("missing_tensor", "tensor model.norm.weight is missing",
           safetensors([x for x in llama_tensors() if x[0] != "model.norm.weight"]))
    t = llama_tensors()
    broken("tensor_stored_twice", "is stored twice", None, files={
        "model.safetensors.index.json": json.dumps({"weight_map": {**{x[0]: "a.safetensors" for x in t},
                                                                   "lm_head.weight": "b.safetensors"}}).encode(),
        "a.safetensors": safetensors(t), "b.safetensors": safetensors([t[-1]])})

    # sharded checkpoints
    first, second = llama_tensors()[:6], llama_tensors()[6:]
    index = {"metadata": {"total_size": 0}, "weight_map": {**{x[0]: "model-1.safetensors" for x in first},
                                                           **{x[0]: "model-2.safetensors" for x in second}}}
    folder(root, "good_sharded", LLAMA_CONFIG, {"model.safetensors.index.json": json.dumps(index).encode(),
                                                "model-1.safetensors": safetensors(first),
                                                "model-2.safetensors": safetensors(second)})
    case("good_sharded", "", "logits -q -m $BAD/good_sharded --tokens 3 -o $TMP/good.npy", status=0)
    broken("shard_missing", "model-2.safetensors: cannot open", files={
        "model.safetensors.index.json": json.dumps(index).encode(), "model-1.safetensors": safetensors(first)})
    wrong = json.loads(json.dumps(index))
    wrong["weight_map"]["model.norm.weight"] = "model-1.safetensors"
    broken("index_names_wrong_shard", "weight_map puts model.norm.weight in model-1.safetensors, which does not hold it",
           files={"model.safetensors.index.json": json.dumps(wrong).encode(),
                  "model-1.safetensors": safetensors(first), "model-2.safetensors": safetensors(second)})
    broken("index_without_weight_map", "no \"weight_map\" object", files={
        "model.safetensors.index.json": b'{"metadata": {}}', "model-1.safetensors": safetensors(first)})
    escape = json.loads(json.dumps(index))
    escape["weight_map"]["model.norm.weight"] = "../good_llama/model.safetensors"
    broken("index_leaves_folder", "must name a file in the folder", files={
        "model.safetensors.index.json": json.dumps(escape).encode(), "model-1.safetensors": safetensors(first),
        "model-2.safetensors": safetensors(second)})

    # config.json
    broken("config_malformed", "config.json: malformed JSON at byte 23: expected a string key", good, config='{"model_type": "llama",, }')
    broken("config_unknown_family", "model_type \"gpt2\" is not supported", good, config={**LLAMA_CONFIG, "model_type": "gpt2"})
    broken("config_missing_vocab", "\"vocab_size\" is missing", good,
           config={k: v for k, v in LLAMA_CONFIG.items() if k != "vocab_size"})
    broken("config_heads_not_multiple", "num_attention_heads 2 is not a multiple of num_key_value_heads 3", good,
           config={**LLAMA_CONFIG, "num_key_value_heads": 3})
    broken("config_negative_layers", "\"num_hidden_layers\" must be a positive integer", good,
           config={**LLAMA_CONFIG, "num_hidden_layers": -1})
    broken("config_rope_yarn", "rope type \"yarn\" is not supported", good,
           config={**LLAMA_CONFIG, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})
    broken("config_llama3_incomplete", "\"low_freq_factor\" is missing", good,
           config={**LLAMA_CONFIG, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}})
    broken("config_wrong_activation", "\"hidden_act\" must be \"silu\"", good, config={**LLAMA_CONFIG, "hidden_act": "gelu"})
    broken("config_vocab_disagrees", "model.embed_tokens.weight has shape [16, 8] but config.json implies [17, 8]", good,
           config={**LLAMA_CONFIG, "vocab_size": 17})
    broken("config_missing", "config.json: cannot open", config=None, files={"model.safetensors": good})
    broken("weights_missing", "model.safetensors: cannot open", files={})

    # the state-space families
    broken("mamba_config_over_llama_tensors", "tensor backbone.layers.0.norm.weight is missing (config.json says model_type mamba)",
           good, config=MAMBA_CONFIG)
    broken("mamba_missing_A_log", "tensor backbone.layers.0.mixer.A_log is missing",
           safetensors(mamba_tensors(drop=("A_log",))), config=MAMBA_CONFIG)
    broken("mamba_conv_kernel_disagrees",
           "backbone.layers.0.mixer.conv1d.weight has shape [16, 1, 3] but config.json implies [16, 1, 4]",
           safetensors(mamba_tensors(conv_kernel=3)), config=MAMBA_CONFIG)
    broken("mamba2_bad_time_step_limit", "\"time_step_limit\" must be [min, max]", good,
           config={"model_type": "mamba2", "vocab_size": 16, "hidden_size": 8, "num_heads": 4, "head_dim": 4,
                   "num_hidden_layers": 1, "time_step_limit": [0.0]})
    broken("mamba2_heads_disagree", "expand x hidden_size = 16 but num_heads x head_dim = 12", good,
           config={"model_type": "mamba2", "vocab_size": 16, "hidden_size": 8, "num_heads": 3, "head_dim": 4,
                   "num_hidden_layers": 1})

    broken("zamba2_block_types_wrong_length", "\"layers_block_type\" must list num_hidden_layers = 2 layer types", good,
           config={"model_type": "zamba2", "vocab_size": 16, "hidden_size": 8, "num_hidden_layers": 2,
                   "n_mamba_heads": 2, "num_attention_heads": 2, "layers_block_type": ["hybrid"]})
    broken("zamba2_unknown_block_type", "layer type \"attention\" is not one gna knows", good,
           config={"model_type": "zamba2", "vocab_size": 16, "hidden_size": 8, "num_hidden_layers": 1,
                   "n_mamba_heads": 2, "num_attention_heads": 2, "layers_block_type": ["attention"]})
    broken("zamba2_zyphra_layout", "\"lora_rank\": Zyphra's original layout", good,
           config={"model_type": "zamba2", "vocab_size": 16, "hidden_size": 8, "num_hidden_layers": 1, "lora_rank": 4,
                   "n_mamba_heads": 2, "num_attention_heads": 2, "layers_block_type": ["mamba"]})
    broken("zamba2_old_adapter_flag", "\"use_shared_attention_lora\": Zyphra's original layout", good,
           config={"model_type": "zamba2", "vocab_size": 16, "hidden_size": 8, "num_hidden_layers": 1,
                   "use_shared_attention_lora": True, "n_mamba_heads": 2, "num_attention_heads": 2,
                   "layers_block_type": ["mamba"]})
    broken("zamba2_long_context", "\"use_long_context\": its long-context RoPE scaling is not implemented", good,
           config={"model_type": "zamba2", "vocab_size": 16, "hidden_size": 8, "num_hidden_layers": 1, "use_long_context": True,
                   "n_mamba_heads": 2, "num_attention_heads": 2, "layers_block_type": ["mamba"]})
    broken("zamba2_headdim_disagrees", "mamba_headdim 3 is not mamba_expand x hidden_size / n_mamba_heads = 8", good,
           config={"model_type": "zamba2", "vocab_size": 16, "hidden_size": 8, "num_hidden_layers": 1, "mamba_headdim": 3,
                   "n_mamba_heads": 2, "num_attention_heads": 2, "layers_block_type": ["mamba"]})
    broken("llamba_unknown_activation", "ssm_cfg.activation \"relu\" is not supported", good,
           config={"model_type": "llamba", "vocab_size": 16, "d_model": 8, "n_layer": 1,
                   "mlp_cfg": {"intermediate_size": 8}, "ssm_cfg": {"d_state": 4, "n_v_heads": 2, "n_qk_heads": 2,
                                                                  "activation": "relu"}})
    broken("llamba_over_llama_tensors", "tensor backbone.layers.0.input_layernorm.weight is missing (config.json says model_type llamba)",
           good, config={"model_type": "llamba", "vocab_size": 16, "d_model": 8, "n_layer": 1,
                         "mlp_cfg": {"intermediate_size": 8}, "ssm_cfg": {"d_state": 4, "n_v_heads": 2, "n_qk_heads": 2}})

    # interventions and surgery
    case("mask_layer_out_of_range", "--mask: \"L1H0\": layer 1 is out of range (the model has 1 layers, 0-0)",
         "logits -m $BAD/good_llama --tokens 1,2 --mask L1H0")
    case("mask_head_out_of_range", "--mask: \"L0H2\": head 2 is out of range (layer 0 has 2 attention heads, 0-1)",
         "logits -m $BAD/good_llama --tokens 1,2 --mask L0H2")
    case("mask_position_out_of_range", "--mask: \"L0H1@-3\": position -3 is outside the 2 tokens",
         "logits -m $BAD/good_llama --tokens 1,2 --mask L0H1@-3")
    case("mask_malformed", "--mask: \"L0Q1\": expected H, A or S after the layer", "logits -m $BAD/good_llama --tokens 1 --mask L0Q1")
    case("mask_backwards", "--mask: \"L0H1@1:1-0\": the key range runs backwards",
         "logits -m $BAD/good_llama --tokens 1,2 --mask L0H1@1:1-0")
    case("mask_channel_out_of_range", "head 16 is out of range (layer 0 has 16 SSM channels, 0-15)",
         "logits -m $BAD/good_mamba --tokens 1 --mask L0H16")
    case("heads_with_positions", "--heads: \"L0H1@-1\": --heads takes heads only", "attn -m $BAD/good_llama --tokens 1,2 --heads L0H1@-1 -o $TMP/a.npy")
    case("rows_out_of_range", "--rows: \"5\": expected positions N or N-M inside the 2 tokens",
         "attn -m $BAD/good_llama --tokens 1,2 --heads L0H1 --rows 5 -o $TMP/a.npy")
    case("drop_out_of_range", "--drop: layer 3 is out of range (the model has layers 0-0)", "logits -m $BAD/good_llama --tokens 1 --drop 3")
    case("layers_malformed", "--layers: expected a range A-B", "logits -m $BAD/good_llama --tokens 1 --layers x")
    case("replace_without_dir", "--replace: expected L=DIR", "logits -m $BAD/good_llama --tokens 1 --replace 0")

    # tokenizers: the valid base first, then tokenizer.json files broken one way each
    folder(root, "good_tokenizer", None, {"tokenizer.json": tokenizer(),
                                          "invalid_utf8.txt": b"ab\xc3(", "text.txt": b"hello hi"})
    folder(root, "good_llama_tokenizer", LLAMA_CONFIG, {"model.safetensors": good, "tokenizer.json": tokenizer()})
    case("good_llama_tokenizer", "", "logits -q -m $BAD/good_llama_tokenizer -p hello -o $TMP/good.npy", status=0)

    def broken_tokenizer(name, expected, edit=None, data=None):
        folder(root, name, None, {"tokenizer.json": data if data is not None else tokenizer(edit)})
        case(name, expected, f"tokenize --tokenizer $BAD/{name}/tokenizer.json -p hello")

    broken_tokenizer("tokenizer_malformed", "tokenizer.json: malformed JSON at byte 10: expected a value", data=b'{"model": ]')
    broken_tokenizer("tokenizer_not_object", "not a tokenizer.json: the document is not an object", data=b"[]")
    broken_tokenizer("tokenizer_without_model", "not a tokenizer.json: \"model\" is missing", lambda t: t.pop("model"))
    broken_tokenizer("tokenizer_wordpiece", "model type \"WordPiece\" is not supported: gna reads BPE models",
                     lambda t: t["model"].update(type="WordPiece"))
    broken_tokenizer("tokenizer_unknown_pre_tokenizer", "pre_tokenizer type \"Whitespace\" is not supported",
                     lambda t: t.update(pre_tokenizer={"type": "Whitespace"}))
    broken_tokenizer("tokenizer_unknown_regex", "the regex \"\\w+\" is not one gna knows",
                     lambda t: t.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": "\\w+"},
                                                       "behavior": "Isolated", "invert": False}))
    broken_tokenizer("tokenizer_unknown_normalizer", "normalizer type \"Lowercase\" is not supported",
                     lambda t: t["normalizer"]["normalizers"].append({"type": "Lowercase"}))
    broken_tokenizer("tokenizer_nfkc", "normalizer NFKC (Unicode normalization) is not supported (gna knows NFC)",
                     lambda t: t.update(normalizer={"type": "NFKC"}))
    broken_tokenizer("tokenizer_unknown_decoder", "decoder type \"WordPiece\" is not supported",
                     lambda t: t.update(decoder={"type": "WordPiece", "prefix": "##", "cleanup": True}))
    broken_tokenizer("tokenizer_unknown_post_processor", "post_processor type \"BertProcessing\" is not supported",
                     lambda t: t.update(post_processor={"type": "BertProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]}))
    broken_tokenizer("tokenizer_merge_not_in_vocab", "merge 8 makes or uses \"lo\", which is not in the vocab",
                     lambda t: t["model"]["merges"].append("l o"))
    broken_tokenizer("tokenizer_merge_not_a_pair", "merge 8, \"hello\", is not two tokens separated by one space",
                     lambda t: t["model"]["merges"].append("hello"))
    broken_tokenizer("tokenizer_id_not_a_number", "model.vocab: the id of \"o\" must be a whole number from 0",
                     lambda t: t["model"]["vocab"].update(o="8"))
    broken_tokenizer("tokenizer_id_twice", "model.vocab gives id 8 to both",
                     lambda t: t["model"]["vocab"].update(x=8))
    broken_tokenizer("tokenizer_unk_missing", "unk_token \"<oov>\" is not in the vocab",
                     lambda t: t["model"].update(unk_token="<oov>"))
    broken_tokenizer("tokenizer_dropout", "\"dropout\" 0.1 makes BPE random", lambda t: t["model"].update(dropout=0.1))
    broken_tokenizer("tokenizer_truncation", "\"truncation\" is set; gna does not truncate",
                     lambda t: t.update(truncation={"max_length": 8, "strategy": "LongestFirst", "stride": 0}))
    broken_tokenizer("tokenizer_template_without_token", "special token \"<bos>\" is not in \"special_tokens\"",
                     lambda t: t["post_processor"]["single"][0]["SpecialToken"].update(id="<bos>"))
    broken_tokenizer("tokenizer_single_word", "added token \"<s>\": single_word is not supported",
                     lambda t: t["added_tokens"][0].update(single_word=True))
    broken_tokenizer("tokenizer_version", "unknown tokenizer version", lambda t: t.update(version="2.0"))
    broken_tokenizer("tokenizer_metaspace_two_characters", "pre_tokenizer Metaspace: \"replacement\" must be one character",
                     lambda t: t.update(pre_tokenizer={"type": "Metaspace", "replacement": "__", "prepend_scheme": "first",
                                                       "split": False}))
    folder(root, "llama_tokenizer_too_big", LLAMA_CONFIG, {
        "model.safetensors": good, "tokenizer.json": tokenizer(lambda t: t["model"]["vocab"].update(x=20))})
    case("prompt_id_past_vocab", "-p: token id 20 is out of range: the model's vocab_size is 16",
         "logits -m $BAD/llama_tokenizer_too_big -p x -o $TMP/half.npy")
    case("prompt_without_tokenizer", "good_llama/tokenizer.json: cannot open", "logits -m $BAD/good_llama -p hello")
    case("tokenize_missing_file", "$BAD/good_tokenizer/no_such_file.txt: cannot open",
         "tokenize --tokenizer $BAD/good_tokenizer/tokenizer.json -f $BAD/good_tokenizer/no_such_file.txt")
    case("tokenize_invalid_utf8", "invalid_utf8.txt: not valid UTF-8 at byte 2 (0xC3)",
         "tokenize --tokenizer $BAD/good_tokenizer/tokenizer.json -f $BAD/good_tokenizer/invalid_utf8.txt")
    case("detokenize_id_out_of_range", "--tokens: token id 99 is not in the tokenizer",
         "detokenize --tokenizer $BAD/good_tokenizer/tokenizer.json --tokens 1,99")
    case("tokenize_text_twice", "-f: give either -p TEXT or -f FILE",
         "tokenize --tokenizer $BAD/good_tokenizer/tokenizer.json -p hi -f $BAD/good_tokenizer/text.txt")
    case("tokenize_without_tokenizer", "-m: give either -m DIR or --tokenizer FILE", "tokenize -p hi")
    case("tokenize_two_tokenizers", "--tokenizer: give either -m DIR or --tokenizer FILE",
         "tokenize -m $BAD/good_tokenizer --tokenizer $BAD/good_tokenizer/tokenizer.json -p hi")
    case("prompt_and_tokens", "-p: give either --tokens IDS or -p TEXT, not both", "logits -m $BAD/good_llama --tokens 1 -p hi")
    case("no_special_without_prompt", "--no-special: only goes with -p or -f", "logits -m $BAD/good_llama --tokens 1 --no-special")
    case("tokenizer_option_on_logits", "--tokenizer: not an option of 'gna logits'",
         "logits -m $BAD/good_llama --tokenizer $BAD/good_tokenizer/tokenizer.json -p hi")

    # arguments
    case("no_such_folder", "$BAD/does_not_exist: no such folder", "info -m $BAD/does_not_exist")
    case("token_out_of_range", "--tokens: token id 16 is out of range: the model's vocab_size is 16",
         "logits -m $BAD/good_llama --tokens 1,16 -o $TMP/half.npy")
    case("tokens_empty_entry", "--tokens: empty entry", "logits -m $BAD/good_llama --tokens 1,,2")
    case("tokens_not_numbers", "--tokens: expected token ids", "logits -m $BAD/good_llama --tokens one,two")
    case("tokens_missing", "--tokens: missing", "logits -m $BAD/good_llama")
    case("model_missing", "-m: missing", "info")
    case("unknown_option", "--bogus: unknown option for 'gna logits'", "logits -m $BAD/good_llama --bogus")
    case("option_of_another_command", "-o: not an option of 'gna info'", "info -m $BAD/good_llama -o $TMP/x.npy")
    case("option_without_value", "--tokens: needs a value", "logits -m $BAD/good_llama --tokens")
    case("threads_zero", "--threads: expected a whole number from 1 to 64", "info -m $BAD/good_llama --threads 0")
    case("negative_temperature", "--temp: expected a number >= 0", "generate -m $BAD/good_llama --tokens 1 --temp -1")
    case("unknown_command", "frobnicate: unknown command", "frobnicate")
    case("no_command", "command: missing", "")
    case("output_folder_missing", "cannot be written: its folder does not exist", "logits -m $BAD/good_llama --tokens 1 -o $TMP/no/such/folder/x.npy")

    # harnesses: broken question files, logs and arguments. Every unknown character tokenizes to <unk>
    # with good_llama_tokenizer, so the valid bases run; the broken ones fail before any scoring.
    H = os.path.join(root, "harness")

    def mmlu_tree(name, test_csv, dev_csv=b"q,a,b,c,d,A\nr,a,b,c,d,B\n"):
        folder(H, name, None, {})
        folder(os.path.join(H, name), "test", None, {"virology_test.csv": test_csv})
        folder(os.path.join(H, name), "dev", None, {"virology_dev.csv": dev_csv})

    mmlu_tree("mmlu_good", b'\xef\xbb\xbfhello,hi,"hi, hello","he said ""hi""","multi\nline",C\r\nhi,hello,hi,hello,hi,A\n')
    case("mmlu_good", "", "mmlu -q -m $BAD/good_llama_tokenizer --data $BAD/harness/mmlu_good --shots 2 --json $TMP/good.npy", status=0)
    mmlu_bad = [
        ("csv_unclosed_quote", b'hi,a,b,c,d,A\n"hi,a,b,c,d,A\n', "virology_test.csv: line 2: a quoted field is never closed"),
        ("csv_quote_in_field", b'hi,a,b,c,d,A\nh"i,a,b,c,d,A\n', "virology_test.csv: line 2: a quote inside an unquoted field"),
        ("csv_text_after_quote", b'hi,a,b,c,d,A\n"h"i,a,b,c,d,A\n', "virology_test.csv: line 2: text after a closing quote"),
        ("csv_five_fields", b'hi,a,b,c,d,A\n"multi\nline",b,c,d,A\n', "virology_test.csv: line 2: 5 fields, expected 6"),
        ("csv_seven_fields", b'hi,a,b,c,d,A,x\n', "virology_test.csv: line 1: 7 fields, expected 6"),
        ("csv_answer_not_a_letter", b'hi,a,b,c,d,E\n', "virology_test.csv: line 1: the answer is \"E\", expected A, B, C or D"),
        ("csv_answer_lower_case", b'hi,a,b,c,d,a\n', "the answer is \"a\", expected A, B, C or D"),
        ("csv_empty_line", b'hi,a,b,c,d,A\n\nhi,a,b,c,d,B\n', "virology_test.csv: line 2: an empty line"),
        ("csv_not_utf8", b'hi,a,b,c,\xff,A\n', "virology_test.csv: not valid UTF-8 at byte 9"),
        ("csv_nul", b'hi,a,b,c,d,A\nhi,a,b\x00,c,d,A\n', "virology_test.csv: line 2: a NUL character"),
    ]
    for name, data, expected in mmlu_bad:
        mmlu_tree(name, data)
        case(name, expected, f"mmlu -m $BAD/good_llama_tokenizer --data $BAD/harness/{name} --json $TMP/out.npy")
    mmlu_tree("mmlu_few_dev", b"hi,a,b,c,d,A\n", dev_csv=b"q,a,b,c,d,A\n")
    case("mmlu_more_shots_than_dev", "subject virology has 1 dev questions, fewer than --shots 3",
         "mmlu -m $BAD/good_llama_tokenizer --data $BAD/harness/mmlu_few_dev --shots 3")
    folder(H, "mmlu_no_tests", None, {})
    folder(os.path.join(H, "mmlu_no_tests"), "test", None, {"notes.txt": b"nothing", "hello_test.csv": b"hi,a,b,c,d,A\n"})
    case("mmlu_no_test_files", "holds none of lm-eval's 57 <subject>_test.csv files", "mmlu -m $BAD/good_llama_tokenizer --data $BAD/harness/mmlu_no_tests")
    case("mmlu_data_missing", "--data: missing: give the MMLU folder", "mmlu -m $BAD/good_llama_tokenizer")
    case("mmlu_data_not_there", "cannot open the folder", "mmlu -m $BAD/good_llama_tokenizer --data $BAD/harness/nowhere")
    jsonl = {
        "mc_good.jsonl": b'{"context": "hello", "choices": ["hi", "hello hi"], "gold": 1}\n{"context": "hi ", "choices": ["hi"], "gold": 0}\n',
        "mc_gold_out_of_range.jsonl": b'{"context": "hello", "choices": ["hi", "hello"], "gold": 2}\n',
        "mc_gold_not_integer.jsonl": b'{"context": "hello", "choices": ["hi", "hello"], "gold": 0.5}\n',
        "mc_no_choices.jsonl": b'{"context": "hello", "choices": [], "gold": 0}\n',
        "mc_choice_not_string.jsonl": b'{"context": "hello", "choices": ["hi", 3], "gold": 0}\n',
        "mc_not_object.jsonl": b'{"context": "hello", "choices": ["hi"], "gold": 0}\n["hello"]\n',
        "mc_broken_json.jsonl": b'{"context": "hello", "choices": ["hi"], "gold": 0}\n{"context": "hello", "choices": ["hi"\n',
        "mc_empty_line.jsonl": b'{"context": "hello", "choices": ["hi"], "gold": 0}\n\n{"context": "hi", "choices": ["hi"], "gold": 0}\n',
        "mc_empty_context.jsonl": b'{"context": "  ", "choices": ["hi"], "gold": 0}\n',
        "mc_invalid_utf8.jsonl": b'{"context": "hello", "choices": ["hi"], "gold": 0}\n{"context": "abc\xf0", "choices": ["x"], "gold": 0}\n',
        "mc_nul_in_choice.jsonl": b'{"context": "hello", "choices": ["h\\u0000i"], "gold": 0}\n',
        "keys_nul.txt": b"hello\nh\x00i\nho\n",
        "keys_not_utf8.txt": b"hello\nh\xffi\n",
        "mmlu_three_choices.jsonl": b'{"subject": "hello", "question": "hi", "choices": ["a", "b", "c"], "answer": 0}\n',
        "mmlu_bad_split.jsonl": b'{"subject": "hello", "question": "hi", "choices": ["a", "b", "c", "d"], "answer": "B", "split": "train"}\n',
        "mmlu_bad_answer.jsonl": b'{"subject": "hello", "question": "hi", "choices": ["a", "b", "c", "d"], "answer": 4}\n',
        "keys_twice.txt": b"hello\nhi\nhello\n",
        "keys_colon.txt": b"hello\nh:i\n",
        "keys_four.txt": b"hello\nhi\nhe\nho\n",
    }
    header = '{"gna": "kv", "shard": "%s", "questions": %d, "settings": {"model": "$BAD/good_llama_tokenizer"}}\n'
    sample = ('{"doc_id": %d, "task": "kv_pairs_2", "doc": {}, "target": 0, "arguments": [["x", "1"]], '
              '"filtered_resps": [[-1.5, true]], "acc": 1.0}\n')
    jsonl["shard1_of_2.jsonl"] = (header % ("1/2", 1) + sample % 0).encode()
    jsonl["shard1_of_2_again.jsonl"] = (header % ("1/2", 1) + sample % 1).encode()
    jsonl["shard2_of_2_short.jsonl"] = (header % ("2/2", 2) + sample % 1).encode()
    jsonl["shard2_of_2_same_doc.jsonl"] = (header % ("2/2", 1) + sample % 0).encode()
    jsonl["shard2_of_2_cut.jsonl"] = (header % ("2/2", 1) + (sample % 1)[:30]).encode()
    jsonl["other_settings.jsonl"] = (header % ("1/1", 1)).encode()
    jsonl["shard1_of_2_crlf.jsonl"] = (header % ("1/2", 1) + sample % 0).replace("\n", "\r\n").encode()
    jsonl["shard1_of_2_acc_5.jsonl"] = (header % ("1/2", 1) + (sample % 0).replace('"acc": 1.0', '"acc": 5')).encode()
    jsonl["shard_negative.jsonl"] = (header % ("1/-2", 1)).encode()
    jsonl["mmlu_log_task_not_mmlu.jsonl"] = (header.replace('"kv"', '"mmlu"') % ("1/1", 1) + sample % 0).encode()
    folder(H, "files", None, jsonl)
    F = "$BAD/harness/files"
    case("mc_good", "", f"mc -q -m $BAD/good_llama_tokenizer --data {F}/mc_good.jsonl --json $TMP/good.npy", status=0)
    for name, expected in [("mc_gold_out_of_range", "line 1: \"gold\" must be the index of a choice, 0-1"),
                           ("mc_gold_not_integer", "line 1: \"gold\" must be the index of a choice"),
                           ("mc_no_choices", "line 1: needs \"choices\", a list of 1 to 64 strings"),
                           ("mc_choice_not_string", "line 1: \"choices\" must hold strings"),
                           ("mc_not_object", "mc_not_object.jsonl: line 2: expected a JSON object"),
                           ("mc_broken_json", "mc_broken_json.jsonl: line 2: malformed JSON"),
                           ("mc_empty_line", "mc_empty_line.jsonl: line 2: an empty line"),
                           ("mc_empty_context", "mc_empty_context.jsonl: line 1: the context is empty (or only white space)"),
                           ("mc_invalid_utf8", "mc_invalid_utf8.jsonl: line 2: not valid UTF-8 at byte 16 of the line"),
                           ("mc_nul_in_choice", "mc_nul_in_choice.jsonl: line 1: \"choices\" holds a NUL character")]:
        case(name, expected, f"mc -m $BAD/good_llama_tokenizer --data {F}/{name}.jsonl --json $TMP/out.npy")
    for name, expected in [("mmlu_three_choices", "line 1: \"choices\" must be a list of 4 strings"),
                           ("mmlu_bad_split", "line 1: \"split\" must be \"dev\" or \"test\""),
                           ("mmlu_bad_answer", "line 1: \"answer\" must be 0-3 or \"A\"-\"D\"")]:
        case(name, expected, f"mmlu -m $BAD/good_llama_tokenizer --data {F}/{name}.jsonl")
    kv = "kv -m $BAD/good_llama_tokenizer --samples 1"
    # good_llama_tokenizer has no digits: "is" + "3" is one fused <unk>, so the value adds no token
    case("kv_value_adds_no_token", "kv_pairs_2: document 0: choice 0 adds no tokens to the context",
         f"{kv} --keys {F}/keys_four.txt --pairs 2,4 --json $TMP/out.npy")
    case("kv_keys_twice", "keys_twice.txt: line 3: a key given twice", f"{kv} --keys {F}/keys_twice.txt --pairs 2")
    case("kv_keys_colon", "keys_colon.txt: line 2: a key with ':'", f"{kv} --keys {F}/keys_colon.txt --pairs 2")
    case("kv_more_pairs_than_keys", "--pairs: 5 pairs need 5 distinct keys; there are 4", f"{kv} --keys {F}/keys_four.txt --pairs 2,5")
    case("kv_pairs_zero", "--pairs: expected up to 64 numbers of pairs from 1 to 100", f"{kv} --pairs 0")
    case("kv_pairs_over_100", "--pairs: expected up to 64 numbers of pairs from 1 to 100", f"{kv} --pairs 101")
    case("kv_pairs_malformed", "--pairs: expected up to 64 numbers", f"{kv} --pairs 10,,20")
    case("kv_pairs_trailing_comma", "--pairs: expected up to 64 numbers", f"{kv} --pairs 10,")
    case("kv_keys_nul", "keys_nul.txt: line 2: a NUL character", f"{kv} --keys {F}/keys_nul.txt --pairs 2")
    case("kv_keys_not_utf8", "keys_not_utf8.txt: line 2: not valid UTF-8", f"{kv} --keys {F}/keys_not_utf8.txt --pairs 2")
    case("kv_seed_too_big", "--seed: expected a whole number from 0 to 4294967295", f"{kv} --seed 4294967296")
    case("shard_malformed", "--shard: expected i/n with 1 <= i <= n", f"{kv} --shard 3/2")
    case("shard_zero", "--shard: expected i/n with 1 <= i <= n", f"{kv} --shard 0/2")
    case("log_of_other_settings", "other_settings.jsonl: holds a run with other settings or another shard",
         f"{kv} --keys {F}/keys_four.txt --pairs 2 --log {F}/other_settings.jsonl")
    case("harness_with_tokens", "--tokens: not an option of 'gna kv'", f"{kv} --tokens 1,2")
    case("shots_on_mc", "--shots: not an option of 'gna mc'", f"mc -m $BAD/good_llama_tokenizer --data {F}/mc_good.jsonl --shots 1")
    case("merge_nothing", "merge: give the logs to merge", "merge")
    case("merge_missing_shard", "merge: shard 2/2 is missing", f"merge {F}/shard1_of_2.jsonl")
    case("merge_shard_twice", "shard1_of_2_again.jsonl: is shard 1/2, which is given twice", f"merge {F}/shard1_of_2.jsonl {F}/shard1_of_2_again.jsonl")
    case("merge_unfinished_shard", "shard2_of_2_short.jsonl: holds 1 of its 2 questions: finish it first",
         f"merge {F}/shard1_of_2.jsonl {F}/shard2_of_2_short.jsonl")
    case("merge_document_twice", "merge: kv_pairs_2 document 0 is in two logs", f"merge {F}/shard1_of_2.jsonl {F}/shard2_of_2_same_doc.jsonl")
    case("merge_cut_line", "shard2_of_2_cut.jsonl: line 2 is unfinished", f"merge {F}/shard1_of_2.jsonl {F}/shard2_of_2_cut.jsonl")
    case("merge_not_a_log", "mc_good.jsonl: line 1: not the first line of a gna log", f"merge {F}/mc_good.jsonl")
    case("merge_crlf_log", "shard1_of_2_crlf.jsonl: line 1: not a first line gna wrote", f"merge {F}/shard1_of_2_crlf.jsonl")
    case("merge_acc_not_0_or_1", "shard1_of_2_acc_5.jsonl: line 2: its acc is not what its log-likelihoods or answers give", f"merge {F}/shard1_of_2_acc_5.jsonl")
    case("merge_negative_shards", "shard_negative.jsonl: line 1: not the first line of a gna log", f"merge {F}/shard_negative.jsonl")

    # 2^32 x 2^32 elements wrap a 64-bit product to 0, which would need no data bytes (issue 25; last, so that
    # the random values of the cases above stay as they were)
    broken("shape_product_wraps", "tensor model.norm.weight: shape is impossibly large",
           edit(lambda h: h["model.norm.weight"].update(shape=[1 << 32, 1 << 32], data_offsets=[
               h["model.norm.weight"]["data_offsets"][0]] * 2)))

    # the other findings of issue 25, one case each
    broken_tokenizer("tokenizer_added_not_utf8", "tokenizer.json: not valid UTF-8 at byte",  # read past its end under NFC
                     data=tokenizer(lambda t: t["added_tokens"].append(
                         {"id": 16, "content": "@INVALID@", "special": False, "normalized": True, "lstrip": False,
                          "rstrip": False, "single_word": False})).replace(b"@INVALID@", b"a\xcc"))
    broken("config_not_utf8", "config.json: not valid UTF-8 at byte 18 (0xFF)", good)
    with open(os.path.join(root, "config_not_utf8", "config.json"), "wb") as f:
        f.write(json.dumps(LLAMA_CONFIG).replace('"llama"', '"ll@"').encode().replace(b"@", b"\xff"))
    folder(root, "header_not_utf8", LLAMA_CONFIG, {"model.safetensors": edit(
        lambda h: h["model.norm.weight"].update(dtype="F@@"))})
    with open(os.path.join(root, "header_not_utf8", "model.safetensors"), "r+b") as f:
        data = f.read().replace(b'"F@@"', b'"F\xc0\x80"')
        f.seek(0)
        f.write(data)
    case("header_not_utf8", "model.safetensors: not valid UTF-8 at byte", "logits -q -m $BAD/header_not_utf8 --tokens 1,2 -o $TMP/out.npy")
    broken("config_expand_nan", "\"expand\" x hidden_size must be a width from 1 to 16777216", good,
           config=json.dumps({**MAMBA_CONFIG, "expand": float("nan")}))
    broken("config_expand_huge", "\"expand\" x hidden_size must be a width from 1 to 16777216", good,
           config={**MAMBA_CONFIG, "expand": 1e300})
    broken("config_heads_huge", "\"num_attention_heads\" must be a positive integer up to 16777216", good,
           config={**LLAMA_CONFIG, "num_attention_heads": 1 << 62, "num_key_value_heads": 1})
    broken("config_layers_past_tensors", "config.json gives 10000000 layers (\"num_hidden_layers\"), but the checkpoint "
           "holds only 12 tensors", good, config={**LLAMA_CONFIG, "num_hidden_layers": 10000000})
    broken_tokenizer("tokenizer_id_huge", "model.vocab: the id of \"o\", 134217728, is over 1057, the largest for the tokens the file holds",
                     lambda t: t["model"]["vocab"].update(o=1 << 27))
    broken("index_opens_no_shard", "no \"weight_map\" object (or an empty one)", files={
        "model.safetensors.index.json": b'{"weight_map": {}}'})
    case("drop_number_cut_short", "--drop: layer 9 is out of range", "logits -m $BAD/good_llama --tokens 1 --drop 0000000000000009")
    case("heads_layer_out_of_range", "--heads: \"L5H0\": layer 5 is out of range",
         "attn -m $BAD/good_llama --tokens 1,2 --heads L5H0 -o $TMP/a.npy")
    # found by fuzzing (test/fuzz): a spec whose second item fails leaked the first (LeakSanitizer)
    case("heads_second_item_fails", "--heads: \"-11\": expected L<layer>H<head>",
         "attn -m $BAD/good_mamba --tokens 1,2 --heads L0H*,-11 -o $TMP/a.npy")
    case("merge_mmlu_task_not_mmlu", "mmlu_log_task_not_mmlu.jsonl: line 2: task \"kv_pairs_2\" is not an MMLU subject",
         f"merge {F}/mmlu_log_task_not_mmlu.jsonl")  # read past the task's end (found by fuzzing)

    # issue 32: a key given twice (Python's json keeps the last, gna would have read the first); NaN weights,
    # which made every logit NaN while the harnesses still printed accuracies
    broken("config_key_twice", "config.json: key \"num_hidden_layers\" is given twice in one object", good,
           config=json.dumps(LLAMA_CONFIG)[:-1] + ', "num_hidden_layers": 4}')
    nan_weights = [(n, d, s, struct.pack("<f", float("nan")) + b[4:]) if n == "model.layers.0.mlp.down_proj.weight" else (n, d, s, b)
                   for n, d, s, b in llama_tensors()]
    folder(root, "weights_nan", LLAMA_CONFIG, {"model.safetensors": safetensors(nan_weights), "tokenizer.json": tokenizer()})
    case("weights_nan", "model.layers: layer 0's output at position 0 is not finite (NaN or Inf)",
         "logits -q -m $BAD/weights_nan --tokens 1,2 -o $TMP/out.npy")
    case("weights_nan_kv", "model.layers: layer 0's output at position 0 is not finite", f"kv -q -m $BAD/weights_nan --keys {F}/keys_four.txt "
         "--pairs 2 --samples 1 --json $TMP/out.npy")

    with open(os.path.join(root, "cases.tsv"), "w") as f:
        f.write("\n".join(cases) + "\n")
    print(f"{len(cases)} cases in {root}")


if __name__ == "__main__":
    main()
