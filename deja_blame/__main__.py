from deja_blame.cli import main

main()
