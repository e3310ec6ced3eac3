/* Cortex-M startup for gna under qemu-system-arm -M mps3-an547 (Cortex-M55) with semihosting: the vector
 * table at the boot address (ITCM, 0x10000000 on the SSE-300), everything else in the 2 GB DDR at
 * 0x60000000; newlib's rdimon crt0 (_start) zeroes .bss, opens the semihosting handles and calls main. */
extern void _start(void);
extern char __stack_top[];
static void fault(void) { for (;;) {} }
static void reset(void) {
    /* the FPU: full access for CP10 and CP11 */
    *(volatile unsigned *)0xE000ED88 |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb");
    _start();
    for (;;) {}
}
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(unsigned)__stack_top, reset, fault, fault, fault, fault, fault, 0, 0, 0, 0, fault, fault, 0, fault, fault,
};

/* newlib's heap: from the end of the program up to __heap_limit in DDR. rdimon's own _sbrk (weak) takes
 * its limits from semihosting's HEAPINFO, which QEMU answers with the ITCM (512 KB at 0), where crt0
 * also puts the stack. */
#include <errno.h>
#include <stddef.h>
extern char end[], __heap_limit[];
static char *heap_peak = end;
void *_sbrk(ptrdiff_t increment) {
    static char *top = end;
    if (increment > __heap_limit - top) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *previous = top;
    top += increment;
    if (top > heap_peak) heap_peak = top;
    return previous;
}

/* the heap's high-water mark, said on the way out (README, Porting: the demo's footprint) */
#include <stdio.h>
__attribute__((destructor)) static void say_heap_peak(void) {
    fprintf(stderr, "m55: heap high-water mark %ld bytes\n", (long)(heap_peak - end));
}

/* rename(): newlib's goes through link() and unlink(), which rdimon lacks (ENOSYS); semihosting has
 * SYS_RENAME (0x0F) */
#include <string.h>
int rename(const char *from, const char *to) {
    unsigned block[4] = {(unsigned)from, strlen(from), (unsigned)to, strlen(to)};
    register unsigned r0 __asm__("r0") = 0x0F;
    register unsigned *r1 __asm__("r1") = block;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    if (r0 != 0) { errno = EIO; return -1; }
    return 0;
}
