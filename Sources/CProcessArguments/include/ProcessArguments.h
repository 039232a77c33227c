#ifndef BLECTL_PROCESS_ARGUMENTS_H
#define BLECTL_PROCESS_ARGUMENTS_H

// Nothing to call: the target defines the symbol the Swift runtime asks argv from
// (ProcessArguments.c says why). Depending on it is enough.

#endif
