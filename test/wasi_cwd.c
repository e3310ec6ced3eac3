/* Linked into the wasm32-wasi builds: start in the folder that test/wasi_run.mjs passes as PWD (WASI
 * programs start in "/", and node's WASI preopens "/" for them), so relative paths work as on a host. */
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void wasi_start_in_pwd(void) {
    const char *pwd = getenv("PWD");
    if (pwd) chdir(pwd);
}
