/* Debian's newlib (libnewlib-arm-none-eabi) is built without C99 printf length modifiers: %zu, %jd and
 * %td print as "zu", "jd", "td" and shift every argument after them. gna.c's formats use them, so the
 * bare-metal build wraps the printf family (-Wl,--wrap=...) with a rewrite of the format: on 32-bit Arm
 * size_t and ptrdiff_t are int-sized (z, t dropped) and intmax_t is long long (j -> ll). */
#include <stdarg.h>
#include <stdio.h>

static const char *c99_format(const char *format, char *buffer, size_t size) {
    size_t n = 0;
    int changed = 0;
    for (const char *p = format; *p; p++) {
        if (n + 3 >= size) return format; /* too long to rewrite: as it is */
        buffer[n++] = *p;
        if (*p != '%') continue;
        if (p[1] == '%') { buffer[n++] = *++p; continue; }
        while (p[1] && (p[1] == '-' || p[1] == '+' || p[1] == ' ' || p[1] == '#' || p[1] == '*' || p[1] == '.' ||
                        (p[1] >= '0' && p[1] <= '9'))) {
            if (n + 3 >= size) return format;
            buffer[n++] = *++p;
        }
        if (p[1] == 'z' || p[1] == 't') { p++; changed = 1; }
        else if (p[1] == 'j') { p++; buffer[n++] = 'l'; buffer[n++] = 'l'; changed = 1; }
    }
    buffer[n] = 0;
    return changed ? buffer : format;
}

int __real_vsnprintf(char *s, size_t size, const char *format, va_list ap);
int __real_vsprintf(char *s, const char *format, va_list ap);
int __real_vfprintf(FILE *f, const char *format, va_list ap);

int __wrap_vsnprintf(char *s, size_t size, const char *format, va_list ap) {
    char b[1024];
    return __real_vsnprintf(s, size, c99_format(format, b, sizeof b), ap);
}
int __wrap_vsprintf(char *s, const char *format, va_list ap) {
    char b[1024];
    return __real_vsprintf(s, c99_format(format, b, sizeof b), ap);
}
int __wrap_vfprintf(FILE *f, const char *format, va_list ap) {
    char b[1024];
    return __real_vfprintf(f, c99_format(format, b, sizeof b), ap);
}
int __wrap_vprintf(const char *format, va_list ap) { return __wrap_vfprintf(stdout, format, ap); }
int __wrap_snprintf(char *s, size_t size, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = __wrap_vsnprintf(s, size, format, ap);
    va_end(ap);
    return n;
}
int __wrap_sprintf(char *s, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = __wrap_vsprintf(s, format, ap);
    va_end(ap);
    return n;
}
int __wrap_fprintf(FILE *f, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = __wrap_vfprintf(f, format, ap);
    va_end(ap);
    return n;
}
int __wrap_printf(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = __wrap_vfprintf(stdout, format, ap);
    va_end(ap);
    return n;
}
