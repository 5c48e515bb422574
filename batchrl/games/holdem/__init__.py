"""Texas hold'em as the ACPC plays it: game definitions, rules, features."""
