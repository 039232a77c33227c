/* maxrss: runs a command and prints its peak resident set size (bench/floor.py).
 *
 *     maxrss COMMAND [ARG...]    -> stderr, last line: "maxrss_kb=N status=S"
 *
 * getrusage(RUSAGE_CHILDREN).ru_maxrss counts the child's memory before exec too; Python's
 * subprocess starts children with vfork (the child borrows Python's 10-20 MB until exec), so
 * the peak a Python parent reads is Python's. This small process forks a copy of itself
 * (well under a megabyte resident), so the peak is the command's. Its stdout and stdin are
 * the command's. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: maxrss COMMAND [ARG...]\n");
        return 64;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("maxrss: fork");
        return 71;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("maxrss: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) {
        perror("maxrss: wait4");
        return 71;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(stderr, "maxrss_kb=%ld status=%d\n", usage.ru_maxrss, code);
    return code;
}
