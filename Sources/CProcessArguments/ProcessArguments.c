// The process's arguments for the Swift runtime's `CommandLine`, taken from what glibc hands
// the executable's constructors (argc, argv, envp), in place of the runtime's own.
//
// Why: linked statically, the Swift runtime finds argv with a C++ static constructor that
// reads /proc/self/maps line by line (an sscanf per mapping) to locate the stack, then walks
// back from `environ`, at every start, before `main` (what that costs: BENCHMARKS.md,
// "Mechanisms kept for speed"). Where /proc is not mounted it finds no arguments at all, and
// blectl built without this file stops on a trap at start (`unshare -m` and `umount /proc`);
// glibc's constructor arguments are always there. The
// runtime asks for argv through `_swift_stdlib_getUnsafeArgvArgc`, the only symbol of its
// object in libswiftCore.a that anything needs; this file defines it, so the linker never takes
// that object (nor its constructor) from the archive. Linked against the shared runtime (debug
// builds), the symbol is the library's own, hidden, and this definition is not used.
//
// glibc passes (argc, argv, envp) to every function in the executable's .init_array; other C
// libraries need not, so elsewhere nothing is defined and the runtime's own object is linked.
#include "ProcessArguments.h"
#if defined(__linux__)
#include <features.h>
#endif

#if defined(__linux__) && defined(__GLIBC__)

static int capturedArgc;
static char **capturedArgv;

static void captureArguments(int argc, char **argv, char **envp) {
    (void)envp;
    capturedArgc = argc;
    capturedArgv = argv;
}

// Runs before any Swift code: the executable's constructors run before `main`.
__attribute__((section(".init_array"), used))
static void (*const captureArgumentsEntry)(int, char **, char **) = captureArguments;

static char *noArguments[] = { 0 };

__attribute__((swiftcall))
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (!capturedArgv) {
        *outArgLen = 0;
        return noArguments;
    }
    *outArgLen = capturedArgc;
    return capturedArgv;
}

#endif
