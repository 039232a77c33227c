import BlectlCLI

// Synchronous: help, --version and usage errors are answered before Swift concurrency
// starts (Blectl.start); everything else runs in a task from there.
Blectl.start()
