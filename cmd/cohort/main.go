// Command cohort is Cohort's one binary: it runs nodes, simulates a
// consortium in one process, submits and follows jobs, and reads the audit
// ledger. Run `cohort --help`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cohortdm/cohort/internal/buildinfo"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/job"
	kindreg "github.com/cohortdm/cohort/kinds"
	"github.com/cohortdm/cohort/sim"
)

// app holds the global flags; it is created per invocation, never global.
type app struct {
	format   string
	logLevel string
	stdout   io.Writer
	stderr   io.Writer
	// getenv reads the environment (COHORT_CONFIG); tests replace it.
	getenv func(string) string
	// clusterStarted, if set, sees each cluster the demo starts: a test
	// counts them.
	clusterStarted func(*sim.Cluster)
}

// configEnv names the environment variable that gives --config its default.
const configEnv = "COHORT_CONFIG"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	if err := a.root().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cohort:", err)
		os.Exit(1)
	}
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "cohort",
		Short: "Privacy-preserving data mining across organisations",
		Long: `Cohort lets several organisations mine their data together without pooling it.
Each organisation runs one node that keeps its private table at home; nodes exchange
only encrypted aggregates or class and split summaries. A Raft-elected coordinator
drives each job.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Read(version).String(),
	}
	root.SetVersionTemplate("cohort {{.Version}}\n")
	root.PersistentFlags().StringVar(&a.format, "format", "text", "output format: text or json")
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if a.format != "text" && a.format != "json" {
			return fmt.Errorf("--format must be text or json, not %q", a.format)
		}
		return nil
	}
	root.AddCommand(a.demoCmd(), a.simCmd(), a.nodeCmd(), a.jobCmd(), a.auditCmd(), a.keysCmd(), a.versionCmd(), a.dataCmd(), a.consortiumCmd(), a.profileCmd())
	// cobra adds its completion group only when executing; add it now so
	// that it, too, fails on an unknown shell.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			failOnUnknown(c)
		}
	}
	return root
}

// groupCmd is a command that only holds subcommands. Run bare, it shows its
// help; with an argument that names none of its subcommands it fails (cobra
// would print the help and exit 0, so a typo looked like success).
func groupCmd(use, short string) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	failOnUnknown(cmd)
	return cmd
}

// failOnUnknown makes a command group fail on an unknown subcommand.
func failOnUnknown(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg := fmt.Sprintf("unknown command %q for %q (its commands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0])
		}
		return errors.New(msg)
	}
}

// configFlag adds --config: a node.yaml path whose default is $COHORT_CONFIG,
// else ./node.yaml.
// persistent puts it on every subcommand of cmd too.
func (a *app) configFlag(cmd *cobra.Command, persistent bool, p *string, what string) {
	def := "node.yaml"
	if env := a.getenv(configEnv); env != "" {
		def = env
	}
	fs := cmd.Flags()
	if persistent {
		fs = cmd.PersistentFlags()
	}
	fs.StringVar(p, "config", def, what+"; $"+configEnv+" sets the default")
}

// kinds is every job kind this binary runs.
func kinds() job.Registry { return kindreg.All() }

func (a *app) logger() *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(a.logLevel)); err != nil {
		lvl = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lvl}))
}

// terminal reports whether stderr is a terminal, where progress lines are
// redrawn in place rather than appended.
func (a *app) terminal() bool {
	f, ok := a.stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// tempDir is where scratch and default output directories go: $TMPDIR as
// the app's environment gives it (a test gives its own), else the
// system's.
func (a *app) tempDir() string {
	if dir := a.getenv("TMPDIR"); dir != "" {
		return dir
	}
	return os.TempDir()
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var errUsage = errors.New("usage")
