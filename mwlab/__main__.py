from mwlab.cli import main

main()
