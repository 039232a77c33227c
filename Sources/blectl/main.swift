import BlectlCLI

await Blectl.main(Array(CommandLine.arguments.dropFirst()))
