from deja_blame.entry import main

# The guard matters: ``deja index`` starts worker processes with "spawn", which
# imports this module again in each of them.
if __name__ == "__main__":
    main()
