package psi

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// RunAlign intersects the sets of several parties (aligning record ids),
// as a star around hub: every other party runs a one-sided ECDH
// exchange (or, with cfg.Mode = ModeOT or ModeVOLE, a KKRT or RR22
// exchange in which the hub is the OPRF receiver; with ModeAuto, whichever of the two the spoke and
// the hub pick from their set sizes) with the hub on its own sub-channel
// ("psi-align/<party>"), in which only the hub learns the pairwise
// intersection; the hub intersects
// those, and tells every spoke, by one bit per element it sent, which of
// them are in every party's set (TypeFilter). Every party of parties
// calls RunAlign with networks of the same scope and the same hub,
// parties and config; every party
// gets the positions of its elems in the common intersection. See the
// package doc for the leakage (the hub learns more than the spokes).
func RunAlign(ctx context.Context, net Network, hub string, parties []string, cfg Config, elems [][]byte) (*Result, error) {
	self := net.Self()
	if !slices.Contains(parties, hub) || !slices.Contains(parties, self) {
		return nil, fmt.Errorf("%w: hub %q and party %q must be among %v", ErrConfig, hub, self, parties)
	}
	sorted := slices.Clone(parties)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(parties) {
		return nil, fmt.Errorf("%w: parties %v repeat a name", ErrConfig, parties)
	}
	channel := func(spoke string) Network { return net.Sub("psi-align/" + spoke) }
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	if cfg.Mode == ModeUnbalanced {
		// Both parties of an unbalanced exchange learn the intersection;
		// a spoke must not learn its pairwise one.
		return nil, fmt.Errorf("%w: Align does not run the unbalanced mode", ErrConfig)
	}
	if self != hub {
		mode, set, err := exchangeMode(ctx, channel(self), hub, cfg, elems)
		if err != nil {
			return nil, err
		}
		var r *Result
		switch mode {
		case ModeOT:
			r, err = otSendAndFilter(ctx, channel(self), hub, set)
		case ModeVOLE:
			r, err = voleSendAndFilter(ctx, channel(self), hub, set)
		default:
			r, err = ecdhSpoke(ctx, channel(self), hub, cfg, elems)
		}
		if err != nil {
			return nil, err
		}
		r.PeerSize = 0
		return r, nil
	}
	return alignHub(ctx, channel, hub, sorted, cfg, elems)
}

// alignHub is the hub's part of RunAlign: one exchange with every spoke
// of sorted (all at once), the intersection of what they give, and a
// filter to every spoke.
func alignHub(ctx context.Context, channel func(string) Network, hub string, sorted []string, cfg Config, elems [][]byte) (*Result, error) {
	var spokes []string
	for _, q := range sorted {
		if q != hub {
			spokes = append(spokes, q)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	views := make([]*spokeView, len(spokes))
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error // the first failure, not the cancellations it causes
	)
	for i, q := range spokes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := hubExchange(ctx, channel(q), q, cfg, elems)
			if err != nil {
				once.Do(func() { firstErr = err; cancel() })
				return
			}
			views[i] = v
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	// Every exchange removed our repeats in the same (first-seen) order,
	// so any view's distinct elements index every view's got.
	var x *exchange
	if len(views) > 0 {
		x = &exchange{uniq: views[0].uniq, of: views[0].of}
	} else {
		uniq, of := distinct(elems)
		x = &exchange{uniq: uniq, of: of}
	}
	// in[u]: our distinct element u is in every spoke's set.
	in := make([]bool, len(x.uniq))
	for u := range in {
		in[u] = true
	}
	for _, v := range views {
		for u := range in {
			in[u] = in[u] && v.got[u]
		}
	}
	for i, q := range spokes {
		if err := sendFilter(ctx, channel(q), q, views[i].filter(in), views[i].echo); err != nil {
			return nil, err
		}
	}
	return x.result(in), nil
}

// exchangeMode is the protocol of one exchange of Align: cfg.Mode, or in
// ModeAuto the one both sides pick from their set sizes; for OT, with our
// set prepared (otSetup).
func exchangeMode(ctx context.Context, net Network, peer string, cfg Config, elems [][]byte) (Mode, *otSet, error) {
	switch cfg.Mode {
	case ModeAuto:
		// Never the unbalanced mode: both of its parties learn the
		// intersection, and a spoke must not learn its pairwise one.
		cfg.Store = nil
		ag, err := agreeMode(ctx, net, peer, cfg, elems)
		if err != nil {
			return 0, nil, err
		}
		if ag.mode == ModeUnbalanced {
			return 0, nil, fmt.Errorf("%s from %s: %w: the peer offers to serve the unbalanced mode in an alignment", TypeSize, peer, ErrPeer)
		}
		if (ag.mode == ModeOT || ag.mode == ModeVOLE) && ag.set == nil {
			ag.set, err = otSetup(net, peer, cfg, elems)
		}
		return ag.mode, ag.set, err
	case ModeOT, ModeVOLE:
		set, err := otSetup(net, peer, cfg, elems)
		return cfg.Mode, set, err
	}
	return cfg.Mode, nil, nil
}

// ecdhSpoke is a spoke's part of an ECDH Align exchange: its set, blinded
// twice, goes to the hub, which returns nothing of its own set but a filter.
func ecdhSpoke(ctx context.Context, net Network, hub string, cfg Config, elems [][]byte) (*Result, error) {
	x, err := run(ctx, net, hub, cfg, elems, true, false)
	if err != nil {
		return nil, err
	}
	return receiveFilter(ctx, net, hub, x)
}

// spokeView is what the hub keeps of its exchange with one spoke.
type spokeView struct {
	// uniq and of are the hub's distinct elements and, for each of its
	// elems, the index of its value in uniq.
	uniq [][]byte
	of   []int
	// got[u] says whether the spoke holds the hub's distinct element u.
	got []bool
	// filter turns the common set (over the hub's distinct elements) into
	// the spoke's filter: one bit per element the spoke sent.
	filter func(in []bool) []bool
	// echo is the spoke's run id, which the filter answers.
	echo []byte
}

// hubExchange runs the hub's side of one spoke's exchange, in ECDH (the
// hub returns no doubles of the spoke's set) or OT or VOLE (the hub is
// the OPRF receiver).
func hubExchange(ctx context.Context, net Network, spoke string, cfg Config, elems [][]byte) (*spokeView, error) {
	mode, set, err := exchangeMode(ctx, net, spoke, cfg, elems)
	if err != nil {
		return nil, err
	}
	if mode == ModeOT || mode == ModeVOLE {
		var x *otReceived
		if mode == ModeOT {
			x, err = otReceive(ctx, net, spoke, set, 0)
		} else {
			x, err = voleReceive(ctx, net, spoke, set)
		}
		if err != nil {
			return nil, err
		}
		got := make([]bool, len(x.matched))
		for u, pos := range x.matched {
			got[u] = pos >= 0
		}
		filter := func(in []bool) []bool {
			bits := make([]bool, x.peerSize)
			for u, pos := range x.matched {
				if pos >= 0 && in[u] {
					bits[pos] = true
				}
			}
			return bits
		}
		return &spokeView{uniq: x.uniq, of: x.of, got: got, filter: filter, echo: x.peerRun}, nil
	}
	x, err := run(ctx, net, spoke, cfg, elems, false, true)
	if err != nil {
		return nil, err
	}
	got := make([]bool, len(x.uniq))
	for _, j := range Match(x.mine, x.theirs) {
		got[x.perm[j]] = true
	}
	filter := func(in []bool) []bool {
		// Our doubles (with this spoke's secret) of the common elements.
		common := make(map[Point]struct{})
		for j, u := range x.perm {
			if in[u] {
				common[x.mine[j]] = struct{}{}
			}
		}
		bits := make([]bool, len(x.theirs))
		for k, d := range x.theirs {
			_, bits[k] = common[d]
		}
		return bits
	}
	return &spokeView{uniq: x.uniq, of: x.of, got: got, filter: filter, echo: x.peerRun}, nil
}
