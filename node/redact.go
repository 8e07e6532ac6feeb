package node

import (
	"path/filepath"
	"sort"
	"strings"
)

// redactPaths rewrites the node's own directories out of a step's error
// before it leaves for the coordinator, whose failure reason every member's
// Raft log keeps: "/srv/acme/tables/north.csv:3: ..." becomes
// "tables_dir/north.csv:3: ...". Where an organisation keeps its files is
// nobody else's business; the file's name within the directory, the row and
// the column are what the submitter needs to fix the input.
func (c *Config) redactPaths(msg string) string {
	type dir struct{ path, name string }
	var dirs []dir
	add := func(p, name string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if p == string(filepath.Separator) {
			return
		}
		dirs = append(dirs, dir{p, name})
	}
	add(c.TablesDir, "tables_dir")
	add(c.DataDir, "data_dir")
	for name, src := range c.Tables {
		if src.Path != "" {
			add(filepath.Dir(src.Path), "table "+name)
		}
		if src.SQLite != "" {
			add(filepath.Dir(src.SQLite), "table "+name)
		}
	}
	// Longest first, so a table file under tables_dir is named by its
	// mapping's directory only when that is the more specific one.
	sort.Slice(dirs, func(i, j int) bool {
		if len(dirs[i].path) != len(dirs[j].path) {
			return len(dirs[i].path) > len(dirs[j].path)
		}
		return dirs[i].name < dirs[j].name
	})
	for _, d := range dirs {
		msg = replaceDir(msg, d.path, d.name)
	}
	return msg
}

// replaceDir replaces dir in msg where it stands as a whole path or as the
// start of one ("/a/b" in "/a/b/c.csv" and "in /a/b:", not in "/a/bc").
func replaceDir(msg, dir, name string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, dir)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := i + len(dir)
		b.WriteString(msg[:i])
		if end == len(msg) || !isNameByte(msg[end]) {
			b.WriteString(name)
		} else {
			b.WriteString(dir)
		}
		msg = msg[end:]
	}
}

// isNameByte reports whether c can continue a file name (so a path that
// goes on with it is another directory).
func isNameByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c == '~' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
