from llmem.code.cli import main

if __name__ == "__main__":  # worker processes (a parse's) import this module again: never serve there
    main()
