/* Replays inputs through a libFuzzer harness without libFuzzer: each file named on the
   command line once, in a build with AddressSanitizer, so a past finding (a crash, a
   leak: LeakSanitizer checks at exit) fails `make test` if it comes back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *file = fopen(argv[i], "rb");
        if (!file) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        uint8_t *data = malloc(1 << 21);
        size_t size = fread(data, 1, 1 << 21, file);
        fclose(file);
        LLVMFuzzerTestOneInput(data, size);
        free(data);
        printf("replayed %s\n", argv[i]);
    }
    return 0;
}
