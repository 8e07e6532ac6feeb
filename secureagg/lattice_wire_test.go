package secureagg

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// A blob larger than a part travels in parts on their own channels and
// arrives whole; an abort arrives as the parties it names.
func TestLatticeBlobParts(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org01")
	agg := func(name string) *schedule {
		_, s, err := newLatticeRun(StepNetwork(net.Party(name), step), step, latticeConfig(keys, name), 10)
		if err != nil {
			t.Fatal(err)
		}
		s.partSize = 1000
		return s
	}
	from, to := agg("org02"), agg("org01")
	data := bytes.Repeat([]byte("0123456789abcdef"), 400) // 6.4 parts
	ctx := context.Background()
	if err := sendBlob(ctx, from, "org01", TypeUp, from.net, data); err != nil {
		t.Fatal(err)
	}
	got, miss, err := receiveBlob(ctx, to, "org02", TypeUp, to.net, len(data))
	if err != nil || len(miss) > 0 || !bytes.Equal(got, data) {
		t.Fatalf("blob of %d bytes: %v %v", len(got), miss, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, _, err := receiveBlob(short, to, "org02", TypeUp, to.net.Sub("other"), 10); err == nil {
		t.Fatal("received a blob that was never sent")
	}
	if err := sendBlob(ctx, from, "org01", TypeDown, from.net, data); err != nil {
		t.Fatal(err)
	}
	if _, _, err := receiveBlob(ctx, to, "org02", TypeDown, to.net, len(data)-1); !errors.Is(err, wire.ErrMalformed) {
		t.Fatalf("an oversized blob: %v", err)
	}
	abort, err := blobAbort([]string{"org03"})
	if err != nil {
		t.Fatal(err)
	}
	if err := from.sendFrames(ctx, 5, "org01", TypeResult, abort, wire.DiscloseControl); err != nil {
		t.Fatal(err)
	}
	if _, miss, err := receiveBlob(ctx, to, "org02", TypeResult, to.net, 10); err != nil || !slices.Equal(miss, []string{"org03"}) {
		t.Fatalf("abort: %v %v", miss, err)
	}
}

// sendBlob sends data to `to` as a blob of s's shape on net, in parts.
func sendBlob(ctx context.Context, s *schedule, to, typ string, net Network, data []byte) error {
	f, err := splitBlob(s.shape, data, s.partSize)
	if err != nil {
		return err
	}
	return s.sendParts(ctx, 5, to, typ, net, f, wire.DiscloseCiphertext)
}

// receiveBlob receives a blob of at most maxSize bytes, or an abort
// naming missing parties, from `from` on net.
func receiveBlob(ctx context.Context, s *schedule, from, typ string, net Network, maxSize int) ([]byte, []string, error) {
	r := newBlobReader(s.shape, maxSize, s.partSize, s.parties)
	if err := s.receiveParts(ctx, 5, from, typ, net, r); err != nil {
		return nil, nil, err
	}
	data, missing := r.message()
	return data, missing, nil
}

// Several aggregations in one step, each on its own sub-channel, run at
// once on the lattice backend without their messages or shares answering
// each other.
func TestLatticeSubChannels(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 4)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org02")
	channels := []string{"rows", "cols"}
	inputs := map[string]map[string][]float64{}
	wants := map[string][]float64{}
	for k, ch := range channels {
		inputs[ch], wants[ch] = exactInputs(c, 5+k, uint64(k))
	}
	got := runChannels(net, step, c.names, channels, func(name string) Config { return latticeConfig(keys, name) }, inputs)
	for _, ch := range channels {
		for _, name := range c.names {
			if o := got[[2]string{name, ch}]; o.err != nil || !slices.Equal(o.res.Sum, wants[ch]) {
				t.Fatalf("%s on %s: %v", name, ch, o.err)
			}
		}
	}
}

// A party that withdraws on the lattice backend is named missing by
// every other party at once.
func TestLatticeWithdraw(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 4)
	net := jobtest.NewNetwork(c.names...)
	step := testStep(c, "org01")
	in, _ := exactInputs(c, 3, 1)
	cause := errors.New("no such table")
	var wg sync.WaitGroup
	res := map[string]error{}
	var mu sync.Mutex
	// An hour's hop timeout: waiting it out could not pass for "at once".
	config := func(n string) Config {
		cfg := latticeConfig(keys, n)
		cfg.Timeout = time.Hour
		return cfg
	}
	for _, n := range c.names {
		wg.Go(func() {
			var err error
			if n == "org03" {
				err = Withdraw(context.Background(), net.Party(n), step, config(n), cause)
			} else {
				_, err = Aggregate(context.Background(), net.Party(n), step, config(n), in[n])
			}
			mu.Lock()
			res[n] = err
			mu.Unlock()
		})
	}
	start := time.Now()
	wg.Wait()
	if !errors.Is(res["org03"], cause) {
		t.Fatalf("withdrawing party: %v", res["org03"])
	}
	for _, n := range []string{"org01", "org02", "org04"} {
		var miss *MissingError
		if !errors.As(res[n], &miss) || !slices.Equal(miss.Parties, []string{"org03"}) {
			t.Fatalf("%s: %v", n, res[n])
		}
	}
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("the others waited %v for a party that withdrew", took)
	}
}

func FuzzLatticePart(f *testing.F) {
	parts, _ := splitBlob("s", bytes.Repeat([]byte{7}, 2500), 1000)
	for _, p := range parts {
		f.Add(p, 0)
	}
	abort, _ := frameRaw(blobHeader{Missing: []string{"a"}}, nil)
	f.Add(abort, 0)
	f.Add([]byte{1, 0x80}, 1)
	f.Fuzz(func(t *testing.T, b []byte, part int) {
		h, chunk, err := decodePart(b, "s", part, 2500, 1000, []string{"a", "b"})
		if err != nil {
			return
		}
		if len(h.Missing) == 0 && (len(chunk) > 1000 || h.Size > 2500 || h.Part != part) {
			t.Fatalf("accepted part %d of %d bytes of a blob of %d", h.Part, len(chunk), h.Size)
		}
	})
}

func FuzzLatticeList(f *testing.F) {
	f.Add(encodeList([][]byte{{1, 2}, nil, {3}}))
	f.Add([]byte{3, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := decodeList(b, 3)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeList(items), b) {
			t.Fatal("decoding is not the inverse of encoding")
		}
	})
}

func FuzzLatticeRequest(f *testing.F) {
	ok, _ := wire.Marshal(latticeRequest{Seq: 1, Available: []string{"a", "b"}})
	f.Add(ok)
	blame, _ := wire.Marshal(latticeRequest{Seq: 2, Blame: true, Available: []string{"a", "b", "c"}})
	f.Add(blame)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeLatticeRequest(b, 0, 2, []string{"a", "b", "c"})
		if err != nil {
			return
		}
		if r.Seq < 1 || r.Seq > maxRequests || len(r.Available) < 2 || !slices.IsSorted(r.Available) {
			t.Fatalf("accepted %+v", r)
		}
	})
}

func FuzzLatticeResult(f *testing.F) {
	ok, _ := encodeResult(&latticeResult{Included: []string{"a", "b"}, Excluded: map[string]string{"b": "x"}, plain: []uint64{5, 0, 3, 0},
		Noise: &NoiseReport{Mechanism: Laplace, Epsilon: 1, Sensitivity: 1, Scale: 1, Shares: 2}})
	f.Add(ok)
	miss, _ := encodeResult(&latticeResult{Missing: []string{"a"}})
	f.Add(miss)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeLatticeResult(b, 4, 1<<40, []string{"a", "b"})
		if err != nil {
			return
		}
		if r.Error == "" && len(r.Missing) == 0 {
			if len(r.plain) != 4 {
				t.Fatal("accepted a plaintext of the wrong length")
			}
			for _, c := range r.plain {
				if c >= 1<<40 {
					t.Fatal("accepted a coefficient out of range")
				}
			}
		}
	})
}
