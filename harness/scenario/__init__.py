"""What a scenario is and says: model, loader, located errors, static checks, profiles, aspects, matchers,
placeholders, content forms, the catalog and its cache, coverage. Imports ``harness.util`` only."""
