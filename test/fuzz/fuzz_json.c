/* The JSON parser (II.5): the input is a document for parse_json, which config.json, safetensors
 * headers, index files, tokenizer.json and the harness files all go through; a parsed tree is walked
 * with json_get (every member of the root) and freed. */

static int fuzz_json(const uint8_t *data, size_t size) {
    JsonDocument doc;
    if (parse_json(&doc, (const char *)data, size, "input") != GNA_OK) return 0;
    if (doc.root->type == JSON_OBJECT)
        for (const JsonValue *m = doc.root->first; m; m = m->next)
            if (json_get(doc.root, m->key) == NULL) abort(); /* every key must be found */
    free_json(&doc);
    return 0;
}
