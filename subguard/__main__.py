from subguard.entry import main

main()
