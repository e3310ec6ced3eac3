/* MMLU's CSV files (II.10, read_csv and read_mmlu_csv through build_mmlu): the input is written as
 * both test/virology_test.csv and dev/virology_dev.csv of a scratch MMLU tree, which build_mmlu reads
 * with 0, 1 or 2 shots (the input's length mod 3) into questions. */

static int fuzz_csv(const uint8_t *data, size_t size) {
    fuzz_setup();
    fuzz_mkdir(TMP("test"));
    fuzz_mkdir(TMP("dev"));
    fuzz_write(TMP("test/virology_test.csv"), data, size);
    fuzz_write(TMP("dev/virology_dev.csv"), data, size);
    Harness h = {0};
    build_mmlu(&h, fuzz_tmp, size % 3, 0);
    free_harness(&h);
    return 0;
}
