from subguard.cli.entry import main

main()
