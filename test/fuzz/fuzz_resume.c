/* Resuming a harness log (II.10, resume_log): the input is the --log file of an mc run over three
 * fixed questions (whose header line is log_header's for "mc" with settings {}); resume_log checks
 * its first line, parses each sample line against the questions and cuts off an unfinished last line. */

static const char questions[] =
    "{\"context\": \"Question: 2+2?\\nAnswer:\", \"choices\": [\"4\", \"five\", \"\\u00e9\"], \"gold\": 0}\n"
    "{\"context\": \"Is it \\\"quoted\\\"?\", \"choices\": [\"yes\", \"no\"], \"gold\": 1}\n"
    "{\"context\": \"Pick one \", \"choices\": [\"a\"], \"gold\": 0}\n";

static int fuzz_resume(const uint8_t *data, size_t size) {
    static Harness h;
    static Bytes header;
    static int mine[3] = {0, 1, 2};
    fuzz_setup();
    if (!header.data) {
        fuzz_write(TMP("mc.jsonl"), questions, sizeof questions - 1);
        if (build_mc(&h, TMP("mc.jsonl"), 0) != GNA_OK || h.n_questions != 3) abort();
        log_header(&header, "mc", "{}", 1, 1, 3);
    }
    fuzz_write(TMP("log.jsonl"), data, size);
    HarnessRun r = {"mc", TMP("log.jsonl"), 1, 1, 1, "{}"};
    int done[3] = {0}, exists;
    Outcomes outcomes = {0};
    FILE *log = fopen(TMP("log.jsonl"), "a+b"); /* as run_harness opens it */
    if (!log) abort();
    resume_log(&r, &h, log, mine, 3, header.data, done, &outcomes, &exists);
    fclose(log);
    free_outcomes(&outcomes);
    return 0;
}
