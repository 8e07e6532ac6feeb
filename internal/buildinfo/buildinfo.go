// Package buildinfo reads what a Cohort binary knows of its own build: the
// version it was linked as, and what the Go toolchain recorded (module
// version, VCS revision and time, Go version). `cohort version` and the
// node console both show it.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is a binary's build.
type Info struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// Read combines linked, the version set at link time ("" when none), with
// the build info the toolchain recorded; without either the version is
// "devel".
func Read(linked string) Info {
	bi := Info{Version: linked, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if bi.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			bi.Version = info.Main.Version
		}
		if info.GoVersion != "" {
			bi.Go = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				bi.Commit = s.Value
			case "vcs.time":
				bi.CommitTime = s.Value
			case "vcs.modified":
				bi.Modified = s.Value == "true"
			}
		}
	}
	if bi.Version == "" {
		bi.Version = "devel"
	}
	return bi
}

// String is the one-line form: "v0.3.0 (commit 3473267a1b2c, 2026-11-23T09:39:30Z, go1.26.8, linux/amd64)".
func (b Info) String() string {
	var parts []string
	if b.Commit != "" {
		c := b.Commit[:min(12, len(b.Commit))]
		if b.Modified {
			c += " with local changes"
		}
		parts = append(parts, "commit "+c)
	}
	if b.CommitTime != "" {
		parts = append(parts, b.CommitTime)
	}
	parts = append(parts, b.Go, b.Platform)
	return fmt.Sprintf("%s (%s)", b.Version, strings.Join(parts, ", "))
}
