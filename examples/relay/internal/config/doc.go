// Package config reads and validates the relay's config.yml: the relay's own
// keys, and the Directory keys (DIRECTORIES, DIRECTORY_SCHEDULER_ENABLED,
// DIRECTORY_PROFILE) read by package directory from the same file. Loading
// touches no network and changes no state, so it backs `relay -t`.
//
//	cfg, err := config.Load("config.yml", os.LookupEnv, &config.LoadOpts{Strict: true})
//	for _, w := range cfg.Warnings { fmt.Println(w) }
package config
