/* The line protocol's floor (issue 22, Docs/Performance.md): the least a process must
   do per request line over the same pipes as `cxshell serve`. It reads each line,
   parses it with jansson, and writes it back as compact JSON: a line of about the same
   length, one write per line. The shell mix's figure divided by this one is the cost of
   everything the shell does beyond the pipe and the JSON. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, stdin)) >= 0) {
        json_error_t error;
        json_t *value = json_loadb(line, (size_t)length, 0, &error);
        char *text = value ? json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER) : strdup("{\"ok\":false}");
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(text);
        json_decref(value);
    }
    free(line);
    return 0;
}
