from llmem.cli import main

main()
