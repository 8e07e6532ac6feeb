package console

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cohortdm/cohort/audit"
)

// The ledger's exports (disclosures.csv and disclosures.jsonl) are kept
// rendered, in chunks of exportChunkRows rows, beside the index that
// holds the rows. A request renders again only the chunks whose rows
// changed since the last export (in practice the last few, where the
// running jobs' rows are) and then writes byte slices that are never
// modified, outside the index's lock. Rendering every row on each request
// cost 63 ms median and 188 ms p95 for the 3.5 MB of the whole ledger at
// 100,000 jobs (docs/console.md), nearly all of it copying and encoding
// rows that had not changed.
//
// A file kept on disk and appended to would not fit: an export's row is a
// total per job, peer and disclosure kind, in the order first seen, and a
// row already written changes while its job runs.

// exportChunkRows is how many rows one rendered chunk holds: a changed row
// costs the rendering of its chunk (a few tens of microseconds), and the
// whole export is written as len(rows)/exportChunkRows slices.
const exportChunkRows = 256

// exportFormat is one of the ledger's export formats.
type exportFormat int

const (
	formatCSV exportFormat = iota
	formatJSONL
	exportFormats
)

func (f exportFormat) ext() string {
	if f == formatCSV {
		return "csv"
	}
	return "jsonl"
}

func (f exportFormat) contentType() string {
	if f == formatCSV {
		return "text/csv; charset=utf-8"
	}
	return "application/jsonl; charset=utf-8"
}

// header is what precedes the rows.
func (f exportFormat) header() ([]byte, error) {
	if f != formatCSV {
		return nil, nil
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	if err := cw.Write([]string{"job", "peer", "disclosure", "messages", "bytes"}); err != nil {
		return nil, fmt.Errorf("export header: %w", err)
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}

// render appends rows to b, one line each, and returns where each ends.
func (f exportFormat) render(b *bytes.Buffer, rows []audit.Row) ([]int, error) {
	ends := make([]int, 0, len(rows))
	if f == formatCSV {
		cw := csv.NewWriter(b)
		for _, r := range rows {
			if err := cw.Write([]string{cell(r.Job), cell(r.Peer), cell(r.Disclosure), strconv.Itoa(r.Messages), strconv.FormatInt(r.Bytes, 10)}); err != nil {
				return nil, fmt.Errorf("export row: %w", err)
			}
			cw.Flush()
			ends = append(ends, b.Len())
		}
		return ends, cw.Error()
	}
	enc := json.NewEncoder(b)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return nil, fmt.Errorf("export row: %w", err)
		}
		ends = append(ends, b.Len())
	}
	return ends, nil
}

// renderedExport is one format's rendering of the index's rows.
type renderedExport struct {
	header []byte
	chunks []renderedChunk
}

// renderedChunk is the rendering of rows [k*exportChunkRows,
// (k+1)*exportChunkRows). buf is replaced, never written to, once handed
// out: a request writes it after the index's lock is released.
type renderedChunk struct {
	gen  uint64 // the index's chunkGen[k] it was rendered at
	buf  []byte // the rows' lines
	ends []int  // where each row's line ends in buf
}

// touch records that row i changed or was added, so that the exports
// render its chunk again. l.mu is held.
func (l *ledgerIndex) touch(i int) {
	k := i / exportChunkRows
	for len(l.chunkGen) <= k {
		l.chunkGen = append(l.chunkGen, 0)
	}
	l.chunkGen[k]++
}

// exported returns the export of the rows a filter selects, in the order
// first seen, as slices to be written one after another, and their total
// length. The slices are not modified afterwards.
func (l *ledgerIndex) exported(f exportFormat, filter ledgerFilter) ([][]byte, int64, error) {
	var out [][]byte
	var size int64
	var err error
	l.read(func(l *ledgerIndex) {
		var ex *renderedExport
		if ex, err = l.renderExport(f); err != nil {
			return
		}
		out = append(out, ex.header)
		if filter == (ledgerFilter{}) {
			for _, c := range ex.chunks {
				out = append(out, c.buf)
			}
		} else {
			out = append(out, ex.selected(l, filter)...)
		}
	})
	for _, b := range out {
		size += int64(len(b))
	}
	return out, size, err
}

// selected returns the rendered lines of the rows filter selects, in
// order, as slices of the chunks (not copied): a run of selected rows next
// to each other in a chunk is one slice. l.mu is held.
func (ex *renderedExport) selected(l *ledgerIndex, filter ledgerFilter) [][]byte {
	var out [][]byte
	var run []byte // the current run, a slice of chunk runChunk
	runChunk, runEnd := -1, 0
	exact := filter.exact()
	for _, i := range l.candidates(filter) {
		if !exact && !filter.match(&l.rows[i]) {
			continue
		}
		k, j := i/exportChunkRows, i%exportChunkRows
		c := &ex.chunks[k]
		start := 0
		if j > 0 {
			start = c.ends[j-1]
		}
		if k == runChunk && start == runEnd {
			run = c.buf[start-len(run) : c.ends[j]]
		} else {
			if run != nil {
				out = append(out, run)
			}
			run = c.buf[start:c.ends[j]]
		}
		runChunk, runEnd = k, c.ends[j]
	}
	if run != nil {
		out = append(out, run)
	}
	return out
}

// renderExport brings format f's rendering up to date with the rows.
// l.mu is held.
func (l *ledgerIndex) renderExport(f exportFormat) (*renderedExport, error) {
	if l.exports[f] == nil {
		h, err := f.header()
		if err != nil {
			return nil, err
		}
		l.exports[f] = &renderedExport{header: h}
	}
	ex := l.exports[f]
	for k, gen := range l.chunkGen {
		if k < len(ex.chunks) && ex.chunks[k].gen == gen {
			continue
		}
		rows := l.rows[k*exportChunkRows : min((k+1)*exportChunkRows, len(l.rows))]
		var b bytes.Buffer
		b.Grow(len(rows) * 40)
		ends, err := f.render(&b, rows)
		if err != nil {
			return nil, err
		}
		c := renderedChunk{gen: gen, buf: b.Bytes(), ends: ends}
		if k < len(ex.chunks) {
			ex.chunks[k] = c
		} else {
			ex.chunks = append(ex.chunks, c)
		}
	}
	return ex, nil
}

// export writes the rows the request's filter selects in format f, with
// their length, so that a client knows a download is whole.
func (c *Console) export(w http.ResponseWriter, r *http.Request, f exportFormat) {
	parts, size, err := c.ledger.exported(f, filterOf(r.URL.Query()))
	if err != nil {
		http.Error(w, "the export could not be rendered", http.StatusInternalServerError)
		return
	}
	c.download(w, f.ext(), f.contentType())
	writeParts(w, parts, size)
}

// writeParts writes an export's slices as they are, one Write each, with
// their length. Joining them first into one Write, or compressing them,
// did not pay on this machine (BenchmarkExportOverHTTP,
// docs/console.md).
func writeParts(w http.ResponseWriter, parts [][]byte, size int64) {
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return // the client went away
		}
	}
}
