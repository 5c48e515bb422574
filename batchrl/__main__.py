from batchrl.cli import main

main()
