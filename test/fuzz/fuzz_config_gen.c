/* Config dimensions (II.7, read_config and the loader's shape checks) with matching weights: the input
 * picks a family (llama, mamba, falcon_mamba, mamba2, llamba) and its config.json numbers - mostly
 * small (1-8, so a valid model stays a few KB), now and then absurd (0, -1, 1.5, 1e9, 2^32, 1e300,
 * NaN) - and flags (biases, tied embeddings, llama3 RoPE, ...). The config read back by read_config
 * gives the shapes of a generated model.safetensors of random weights (F32, BF16 or F16, one tensor
 * perhaps off by one); the folder is loaded and, when it loads, two tokens run through the model. */


/* a config number: 1..limit (times `scale`), or, for bytes >= 248, something absurd */
static const char *number(Reader *r, unsigned limit, unsigned scale) {
    static const char *const absurd[] = {"0", "-1", "1.5", "1000000000", "4294967296", "1e300", "NaN", "null"};
    static char buffers[32][32];
    static int n;
    unsigned b = next(r);
    if (b >= 248) return absurd[b - 248];
    char *out = buffers[n++ % 32];
    snprintf(out, 32, "%u", (1 + b % limit) * scale);
    return out;
}
#define FLAG(r) (next(r) & 1 ? "true" : "false")

typedef struct { char name[128]; size_t d[3]; } Spec;
static Spec specs[512];
static int n_specs;
static void add(size_t d0, size_t d1, size_t d2, const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (n_specs < 512) vsnprintf(specs[n_specs].name, sizeof specs[n_specs].name, format, args), memcpy(specs[n_specs++].d, (size_t[3]){d0, d1, d2}, sizeof(size_t[3]));
    va_end(args);
}

static void add_mlp(const Config *c, const char *p) {
    size_t D = c->hidden_size, I = c->intermediate_size;
    add(I, D, 0, "%s.mlp.gate_proj.weight", p), add(I, D, 0, "%s.mlp.up_proj.weight", p), add(D, I, 0, "%s.mlp.down_proj.weight", p);
    if (c->mlp_bias) add(I, 0, 0, "%s.mlp.gate_proj.bias", p), add(I, 0, 0, "%s.mlp.up_proj.bias", p), add(D, 0, 0, "%s.mlp.down_proj.bias", p);
}

static void add_ssd(const Config *c, const char *p, int llamba) {
    size_t D = c->hidden_size, di = c->ssm_inner, H = c->ssm_heads, conv = di + 2 * c->n_groups * c->ssm_state;
    add(di + conv + H, D, 0, "%s.in_proj.weight", p), add(conv, 1, c->conv_kernel, "%s.conv1d.weight", p);
    add(H, 0, 0, "%s.D", p), add(D, di, 0, "%s.out_proj.weight", p);
    if (!llamba) add(H, 0, 0, "%s.dt_bias", p), add(H, 0, 0, "%s.A_log", p), add(di, 0, 0, "%s.norm.weight", p);
    if (c->conv_bias) add(conv, 0, 0, "%s.conv1d.bias", p);
    if (c->ssm_bias) add(di + conv + H, 0, 0, "%s.in_proj.bias", p), add(D, 0, 0, "%s.out_proj.bias", p);
    else if (llamba) add(di, 0, 0, "%s.z_bias", p);
}

static void add_tensors(const Config *c) {
    size_t V = c->vocab_size, D = c->hidden_size, di = c->ssm_inner, N = c->ssm_state;
    size_t q = c->n_heads * c->head_dim, kv = c->n_kv_heads * c->head_dim;
    int llama = c->family == FAMILY_LLAMA, llamba = c->family == FAMILY_LLAMBA;
    add(V, D, 0, llama ? "model.embed_tokens.weight" : llamba ? "backbone.embedding.weight" : "backbone.embeddings.weight");
    add(D, 0, 0, llama ? "model.norm.weight" : llamba ? "backbone.final_layernorm.weight" : "backbone.norm_f.weight");
    if (!c->tie_embeddings) add(V, D, 0, "lm_head.weight");
    if (c->lm_head_bias) add(V, 0, 0, "lm_head.bias");
    for (size_t l = 0; l < c->n_layers && l < 64; l++) {
        char p[64], mixer[80];
        snprintf(p, sizeof p, llama ? "model.layers.%zu" : "backbone.layers.%zu", l);
        snprintf(mixer, sizeof mixer, "%s.mixer", p);
        if (llama || llamba) add(D, 0, 0, "%s.input_layernorm.weight", p), add(D, 0, 0, "%s.post_attention_layernorm.weight", p), add_mlp(c, p);
        else add(D, 0, 0, "%s.norm.weight", p);
        if (llama) {
            add(q, D, 0, "%s.self_attn.q_proj.weight", p), add(kv, D, 0, "%s.self_attn.k_proj.weight", p);
            add(kv, D, 0, "%s.self_attn.v_proj.weight", p), add(D, q, 0, "%s.self_attn.o_proj.weight", p);
            if (c->attention_bias)
                add(q, 0, 0, "%s.self_attn.q_proj.bias", p), add(kv, 0, 0, "%s.self_attn.k_proj.bias", p),
                    add(kv, 0, 0, "%s.self_attn.v_proj.bias", p), add(D, 0, 0, "%s.self_attn.o_proj.bias", p);
        } else if (c->family == FAMILY_MAMBA2 || llamba) {
            add_ssd(c, mixer, llamba);
        } else { /* mamba, falcon_mamba */
            add(2 * di, D, 0, "%s.in_proj.weight", mixer), add(di, 1, c->conv_kernel, "%s.conv1d.weight", mixer);
            add(c->dt_rank + 2 * N, di, 0, "%s.x_proj.weight", mixer), add(di, c->dt_rank, 0, "%s.dt_proj.weight", mixer);
            add(di, 0, 0, "%s.dt_proj.bias", mixer), add(di, N, 0, "%s.A_log", mixer), add(di, 0, 0, "%s.D", mixer);
            add(D, di, 0, "%s.out_proj.weight", mixer);
            if (c->conv_bias) add(di, 0, 0, "%s.conv1d.bias", mixer);
            if (c->ssm_bias) add(2 * di, 0, 0, "%s.in_proj.bias", mixer), add(D, 0, 0, "%s.out_proj.bias", mixer);
        }
    }
}

static int fuzz_config_gen(const uint8_t *data, size_t size) {
    fuzz_setup();
    Reader r = {data, size, 0};
    Bytes cfg = {0};
    unsigned family = next(&r) % 5;
    const char *V = number(&r, 32, 1), *D = number(&r, 8, 2), *L = number(&r, 3, 1);
    if (family == 0) {
        bytes_printf(&cfg, "{\"model_type\": \"llama\", \"vocab_size\": %s, \"hidden_size\": %s, \"num_hidden_layers\": %s, "
                           "\"intermediate_size\": %s, \"num_attention_heads\": %s, \"num_key_value_heads\": %s, \"head_dim\": %s, "
                           "\"tie_word_embeddings\": %s, \"attention_bias\": %s, \"mlp_bias\": %s, \"rms_norm_eps\": 1e-5, \"rope_theta\": %s",
                     V, D, L, number(&r, 8, 1), number(&r, 4, 1), number(&r, 2, 1), number(&r, 4, 2), FLAG(&r), FLAG(&r), FLAG(&r),
                     number(&r, 100, 100));
        if (next(&r) & 1)
            bytes_printf(&cfg, ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": %s, \"low_freq_factor\": %s, "
                               "\"high_freq_factor\": %s, \"original_max_position_embeddings\": %s}",
                         number(&r, 8, 1), number(&r, 2, 1), number(&r, 8, 1), number(&r, 64, 1));
    } else if (family <= 2) {
        bytes_printf(&cfg, "{\"model_type\": \"%s\", \"vocab_size\": %s, \"hidden_size\": %s, \"num_hidden_layers\": %s, "
                           "\"state_size\": %s, \"conv_kernel\": %s, \"time_step_rank\": %s, \"expand\": %s, \"use_bias\": %s, "
                           "\"use_conv_bias\": %s, \"tie_word_embeddings\": %s",
                     family == 1 ? "mamba" : "falcon_mamba", V, D, L, number(&r, 8, 1), number(&r, 4, 1), number(&r, 4, 1),
                     number(&r, 3, 1), FLAG(&r), FLAG(&r), FLAG(&r));
        if (next(&r) & 1) bytes_printf(&cfg, ", \"intermediate_size\": %s", number(&r, 16, 1));
    } else if (family == 3) {
        bytes_printf(&cfg, "{\"model_type\": \"mamba2\", \"vocab_size\": %s, \"hidden_size\": %s, \"num_hidden_layers\": %s, "
                           "\"num_heads\": %s, \"head_dim\": %s, \"state_size\": %s, \"n_groups\": %s, \"conv_kernel\": %s, "
                           "\"chunk_size\": %s, \"expand\": %s, \"use_bias\": %s, \"use_conv_bias\": %s, \"tie_word_embeddings\": %s, "
                           "\"time_step_limit\": [0.0, %s]",
                     V, D, L, number(&r, 8, 1), number(&r, 4, 1), number(&r, 8, 1), number(&r, 2, 1), number(&r, 4, 1),
                     number(&r, 8, 1), number(&r, 2, 1), FLAG(&r), FLAG(&r), FLAG(&r), number(&r, 8, 1));
    } else {
        bytes_printf(&cfg, "{\"model_type\": \"llamba\", \"vocab_size\": %s, \"d_model\": %s, \"n_layer\": %s, "
                           "\"pad_vocab_size_multiple\": %s, \"tie_embeddings\": %s, \"lm_head_bias\": %s, "
                           "\"mlp_cfg\": {\"intermediate_size\": %s, \"bias\": %s}, \"ssm_cfg\": {\"d_state\": %s, \"n_v_heads\": %s, "
                           "\"n_qk_heads\": %s, \"expand\": %s, \"d_conv\": %s, \"chunk_size\": %s, \"bias\": %s, \"conv_bias\": %s, "
                           "\"activation\": \"%s\"}",
                     V, D, L, number(&r, 8, 1), FLAG(&r), FLAG(&r), number(&r, 8, 1), FLAG(&r), number(&r, 8, 1), number(&r, 4, 1),
                     number(&r, 2, 1), number(&r, 2, 1), number(&r, 4, 1), number(&r, 8, 1), FLAG(&r), FLAG(&r),
                     next(&r) & 1 ? "silu" : "identity");
    }
    bytes_add_text(&cfg, "}");
    fuzz_write(TMP("config.json"), cfg.data, cfg.length);
    free(cfg.data);
    Config c;
    int read = read_config(TMP("config.json"), &c);
    free(c.shared_visit);
    if (read != GNA_OK) return 0;
    n_specs = 0;
    add_tensors(&c);
    double total = 0;
    for (int i = 0; i < n_specs; i++) total += (double)specs[i].d[0] * (specs[i].d[1] ? specs[i].d[1] : 1) * (specs[i].d[2] ? specs[i].d[2] : 1);
    if (total > (1 << 20)) return 0; /* too big to write: read_config had its say */
    unsigned wrong = next(&r); /* one tensor's first dimension one too large, now and then */
    Bytes header = {0}, weights = {0};
    uint64_t rng = next(&r);
    bytes_add_text(&header, "{");
    for (int i = 0; i < n_specs; i++) {
        Spec *s = &specs[i];
        size_t n = (s->d[0] + (wrong == (unsigned)i + 200)) * (s->d[1] ? s->d[1] : 1) * (s->d[2] ? s->d[2] : 1);
        int dtype = next(&r) % 3, bytes = dtype ? 2 : 4;
        while (weights.length % 4) bytes_add(&weights, "", 1);
        bytes_printf(&header, "%s\"%s\": {\"dtype\": \"%s\", \"shape\": [%zu", i ? ", " : "", s->name, (const char *[]){"F32", "BF16", "F16"}[dtype],
                     s->d[0] + (wrong == (unsigned)i + 200));
        for (int d = 1; d < 3 && s->d[d]; d++) bytes_printf(&header, ", %zu", s->d[d]);
        bytes_printf(&header, "], \"data_offsets\": [%zu, %zu]}", weights.length, weights.length + n * (size_t)bytes);
        for (size_t k = 0; k < n; k++) {
            float x = (float)((double)(random_next(&rng) >> 11) / 9007199254740992.0 - 0.5);
            uint32_t u;
            memcpy(&u, &x, 4);
            uint16_t h = dtype == 1 ? (uint16_t)(u >> 16) : (uint16_t)((u >> 16 & 0x8000) | (uint16_t)(random_next(&rng) & 0x3FF) | (10 + random_next(&rng) % 4) << 10);
            bytes_add(&weights, dtype ? (const void *)&h : (const void *)&x, (size_t)bytes);
        }
    }
    bytes_add_text(&header, "}");
    while (header.length % 8) bytes_add_text(&header, " ");
    uint64_t length = header.length;
    Bytes file = {0};
    bytes_add(&file, &length, 8);
    bytes_add(&file, header.data, header.length);
    bytes_add(&file, weights.data ? weights.data : "", weights.length);
    fuzz_write(TMP("model.safetensors"), file.data, file.length);
    free(file.data), free(header.data), free(weights.data);
    fuzz_forward(fuzz_tmp);
    return 0;
}
