import BlectlCLI

await Blectl.main()
