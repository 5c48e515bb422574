"""One subpackage per game: rules, features, bots and log writers."""
