# Install rules and the rlx package config (filled in with the plugin work).
