/* Structure-aware safetensors (II.6, II.7): the input drives a generator that writes model.safetensors
 * for the tiny llama of test/bad/good_llama (its config.json beside it) with a header that stays JSON:
 * for each of the llama's tensors (taken from the real file) one input byte says keep it, drop it,
 * store it twice, change a dimension (to a small or an absurd number), give it another dtype (any of
 * safetensors', or an unknown one), add a dimension, or shift its offsets; otherwise its dtype is F32,
 * BF16 or F16. Offsets are laid out in order, aligned, with gaps the input picks; the data bytes are
 * the rest of the input, repeated. A header byte may also skew the header length or cut the file
 * short. Whatever loads runs two tokens, so most inputs reach the model code with fuzzed weights. */

static Checkpoint llama; /* the real tensors: names and shapes */


static int fuzz_safetensors_gen(const uint8_t *data, size_t size) {
    static const char *const absurd[] = {"0", "-1", "1.5", "4294967296", "9007199254740993", "1e15", "1e300", "NaN", "\"8\""};
    static const char *const dtypes[] = {"F32", "BF16", "F16", "F64", "I32", "U8", "BOOL", "F8_E4M3", "F7", ""};
    fuzz_setup();
    if (!llama.n_files) {
        if (build_checkpoint(&llama, REPO("test/bad/good_llama")) != GNA_OK) abort();
        fuzz_copy(REPO("test/bad/good_llama/config.json"), TMP("config.json"));
    }
    Reader r = {data, size, 0};
    unsigned flags = next(&r);
    Bytes header = {0};
    bytes_add_text(&header, "{\"__metadata__\": {\"format\": \"pt\"}");
    long long offset = 0;
    for (int i = 0; i < llama.n_tensors; i++) {
        const Tensor *t = &llama.tensors[i];
        unsigned op = next(&r), arg = next(&r), copies = op % 16 == 1 ? 2 : op % 16 != 0;
        const char *dtype = op % 16 == 4 ? dtypes[arg % 10] : dtypes[op % 3];
        int bytes = strcmp(dtype, "F32") == 0 || strcmp(dtype, "I32") == 0 ? 4 : strcmp(dtype, "F64") == 0 ? 8 : dtype[0] == 'B' && dtype[1] == 'F' ? 2
                  : strcmp(dtype, "F16") == 0 ? 2 : 1;
        for (unsigned c = 0; c < copies; c++) {
            char dims[256] = "";
            long long elements = 1;
            for (int d = 0; d < t->ndim + (op % 16 == 5); d++) {
                long long n = d < t->ndim ? t->shape[d] : 1;
                if (op % 16 == 2 && d == (int)(arg >> 5) % t->ndim) n = arg & 15;
                if (op % 16 == 3 && d == (int)(arg >> 5) % t->ndim) {
                    snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%s", d ? ", " : "", absurd[arg % 9]);
                    continue;
                }
                elements *= n;
                snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld", d ? ", " : "", n);
            }
            offset += (next(&r) % 8 == 0) * bytes * (long long)(next(&r) % 4); /* a gap sometimes */
            long long begin = offset, end = offset + elements * bytes;
            if (op % 16 == 6) begin += (int)(arg % 9) - 4, end += (int)(next(&r) % 9) - 4;
            bytes_printf(&header, ", \"%s\": {\"dtype\": \"%s\", \"shape\": [%s], \"data_offsets\": [%lld, %lld]}", t->name, dtype,
                         dims, begin, end);
            offset = end > offset && end < (1 << 20) ? end : offset;
        }
    }
    bytes_add_text(&header, "}");
    while (header.length % 8) bytes_add_text(&header, " ");
    uint64_t length = header.length + (flags % 32 == 1 ? (int)next(&r) % 16 - 8 : 0);
    size_t cut = flags % 32 == 2 ? next(&r) % 64 : 0; /* the file cut short by up to 63 bytes of data */
    size_t file_size = 8 + header.length + ((size_t)offset > cut ? (size_t)offset - cut : 0);
    uint8_t *file = calloc(1, file_size);
    for (int i = 0; i < 8; i++) file[i] = (uint8_t)(length >> (8 * i));
    memcpy(file + 8, header.data, header.length);
    for (size_t i = 8 + header.length, k = r.at; r.at < size && i < file_size; i++, k = k + 1 < size ? k + 1 : r.at) file[i] = data[k];
    fuzz_write(TMP("model.safetensors"), file, file_size);
    fuzz_forward(fuzz_tmp);
    free(file);
    free(header.data);
    return 0;
}
