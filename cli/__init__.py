"""``ctiwire``, the one command line: it assembles what it runs and sits above every other room."""
