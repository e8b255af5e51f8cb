package config

import "flag"

// RegisterFlags adds the repeatable --config-file and --config-dir flags to
// fs and returns the LoadOptions they fill in as fs is parsed.
func RegisterFlags(fs *flag.FlagSet) *LoadOptions {
	opts := &LoadOptions{}
	fs.Func("config-file", "path to a configuration file (repeatable; later files win)", func(s string) error {
		opts.Files = append(opts.Files, s)
		return nil
	})
	fs.Func("config-dir", "directory whose *.conf files are read in lexical order after --config-file (repeatable)", func(s string) error {
		opts.Dirs = append(opts.Dirs, s)
		return nil
	})
	return opts
}
