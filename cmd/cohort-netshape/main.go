// Command cohort-netshape relays UDP datagrams from one address to another
// with a fixed delay and loss rate: the WAN and lossy profiles of
// scripts/cluster.sh run one in front of each node's QUIC listener where the
// kernel has no netem. See package internal/netshape.
//
//	cohort-netshape --listen 10.250.0.11:7400 --to 127.0.0.1:7400 --delay 50ms --loss 0.01
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cohortdm/cohort/internal/netshape"
)

func main() {
	var cfg netshape.Config
	flag.StringVar(&cfg.Listen, "listen", "", "address to receive datagrams on (HOST:PORT)")
	flag.StringVar(&cfg.Target, "to", "", "address to relay them to (HOST:PORT)")
	flag.DurationVar(&cfg.Delay, "delay", 0, "delay added to every datagram, each direction")
	flag.Float64Var(&cfg.Loss, "loss", 0, "probability of dropping a datagram, each direction (0.01 is 1%)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the drops")
	flag.Parse()
	if cfg.Listen == "" || cfg.Target == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: cohort-netshape --listen HOST:PORT --to HOST:PORT [--delay 50ms] [--loss 0.01] [--seed N]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := netshape.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cohort-netshape:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "cohort-netshape: %s -> %s, delay %v, loss %g\n", r.Addr(), cfg.Target, cfg.Delay, cfg.Loss)
	start := time.Now()
	if err := r.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cohort-netshape:", err)
		os.Exit(1)
	}
	st := r.Stats()
	fmt.Fprintf(os.Stderr, "cohort-netshape: %s after %v: forwarded %d, dropped %d, queue overflow %d\n",
		r.Addr(), time.Since(start).Round(time.Millisecond), st.Forwarded, st.Dropped, st.Overflow)
}
