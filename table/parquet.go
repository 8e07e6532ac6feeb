package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// readParquet streams a flat Parquet file row group by row group, a batch
// of rows at a time; only the loaded columns are kept.
func readParquet(ctx context.Context, src Source, name string, schema map[string]Kind, opts ReadOptions) (*Table, error) {
	desc := opts.describe(src)
	f, err := os.Open(src.Path)
	if err != nil {
		return nil, fileError(desc, err)
	}
	defer f.Close()
	pf, fields, b, err := parquetHeader(f, desc, schema, opts)
	if err != nil {
		return nil, err
	}
	if opts.sink != nil && b.projectable(fields) {
		if err := parquetColumns(ctx, pf, desc, b); err != nil {
			return nil, err
		}
		return b.finish(name), nil // after: finish infers kinds on the (empty) columns
	}
	row := make([]cell, len(fields))
	n := 0
	where := func(int) string { return fmt.Sprintf("%s: row %d", desc, n) }
	buf := make([]parquet.Row, 1024)
	for _, rg := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows := rg.Rows()
		for {
			k, err := rows.ReadRows(buf)
			for _, r := range buf[:k] {
				n++
				for i := range row {
					row[i] = cell{null: true} // a missing value in an optional column
				}
				for _, v := range r {
					if c := v.Column(); c >= 0 && c < len(row) {
						row[c] = parquetCell(v)
					}
				}
				if err := b.add(row, where); err != nil {
					rows.Close()
					return nil, err
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("%w: %s: row %d: %w", ErrSource, desc, n+1, err)
			}
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSource, desc, err)
		}
	}
	return b.finish(name), nil
}

// parquetHeader opens a flat Parquet file and checks its columns as every
// reader does, and their types against the schema.
func parquetHeader(f *os.File, desc string, schema map[string]Kind, opts ReadOptions) (*parquet.File, []parquet.Field, *builder, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, nil, fileError(desc, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s: not a readable Parquet file: %w", ErrSource, desc, err)
	}
	fields := pf.Schema().Fields()
	names := make([]string, len(fields))
	for i, fl := range fields {
		if !fl.Leaf() || fl.Repeated() {
			return nil, nil, nil, fmt.Errorf("%w: %s: column %q is nested or repeated; only flat tables can be read", ErrSource, desc, fl.Name())
		}
		names[i] = fl.Name()
	}
	b, err := newBuilder(desc, names, schema, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	for j, c := range b.cols {
		if c.Kind == Numeric && !parquetNumeric(fields[b.idx[j]].Type()) {
			return nil, nil, nil, fmt.Errorf("%w: %s: column %q has Parquet type %s, but the schema says numeric", ErrSource, desc, c.Name, fields[b.idx[j]].Type())
		}
	}
	return pf, fields, b, nil
}

// projectable says whether the sink's columns alone can be read: each is
// in the table, and no other loaded column can hold a value the row check
// refuses, because each is required (no NULL) and, when numeric, of an
// integer type (no NaN).
func (b *builder) projectable(fields []parquet.Field) bool {
	if len(b.sinkCols()) != len(b.sink.names()) {
		return false
	}
	for j, c := range b.cols {
		if b.sinkAt[j] >= 0 {
			continue
		}
		fl := fields[b.idx[j]]
		if fl.Optional() || c.Kind == Numeric && (fl.Type().Kind() == parquet.Float || fl.Type().Kind() == parquet.Double) {
			return false
		}
	}
	return true
}

// sinkCols are the loaded columns the sink reads, by index in b.cols.
func (b *builder) sinkCols() []int {
	var out []int
	for j, at := range b.sinkAt {
		if at >= 0 {
			out = append(out, j)
		}
	}
	return out
}

// parquetColumns hands the sink's columns to it, reading only those
// columns' pages, row group by row group, a page of each at a time; the
// rows are checked as the full reader checks them, those columns alone.
func parquetColumns(ctx context.Context, pf *parquet.File, desc string, b *builder) error {
	js := b.sinkCols()
	one := &builder{source: desc, infer: b.infer}
	for k, j := range js {
		one.cols = append(one.cols, b.cols[j])
		one.idx = append(one.idx, k)
	}
	one.bindSink(b.sink)
	n := 0
	where := func(int) string { return fmt.Sprintf("%s: row %d", desc, n) }
	row := make([]cell, len(js))
	for _, rg := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		its := make([]*pageValues, len(js))
		for k, j := range js {
			its[k] = &pageValues{pages: rg.ColumnChunks()[b.idx[j]].Pages()}
		}
		err := func() error {
			defer func() {
				for _, it := range its {
					it.close()
				}
			}()
			for range rg.NumRows() {
				n++
				for k, it := range its {
					v, err := it.next()
					if err != nil {
						return fmt.Errorf("%w: %s: row %d: %w", ErrSource, desc, n, err)
					}
					row[k] = parquetCell(v)
				}
				if err := one.add(row, where); err != nil {
					return err
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// pageValues reads one flat column chunk's values a page at a time.
type pageValues struct {
	pages parquet.Pages
	page  parquet.Page
	vals  parquet.ValueReader
	buf   []parquet.Value
	at    int
}

// next is the chunk's next value; the one before it may no longer be
// used (its page may have been released).
func (p *pageValues) next() (parquet.Value, error) {
	for p.at == len(p.buf) {
		if p.vals != nil {
			k, err := p.vals.ReadValues(p.buf[:cap(p.buf)])
			p.buf, p.at = p.buf[:k], 0
			if k > 0 {
				break
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return parquet.Value{}, err
			}
			parquet.Release(p.page)
			p.page, p.vals = nil, nil
		}
		pg, err := p.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return parquet.Value{}, io.ErrUnexpectedEOF
		}
		if err != nil {
			return parquet.Value{}, err
		}
		p.page, p.vals = pg, pg.Values()
		if p.buf == nil {
			p.buf = make([]parquet.Value, 0, 1024)
		}
	}
	p.at++
	return p.buf[p.at-1], nil
}

func (p *pageValues) close() {
	if p.page != nil {
		parquet.Release(p.page)
	}
	p.pages.Close()
}

// parquetNumeric accepts plain integers and floating point; decimals,
// dates and timestamps are not numbers a job may sum as stored.
func parquetNumeric(t parquet.Type) bool {
	switch t.Kind() {
	case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
	default:
		return false
	}
	lt := t.LogicalType()
	if lt == nil || lt.Value == nil {
		return true
	}
	switch lt.Value.(type) {
	case *format.IntType:
		return true
	}
	return false
}

func parquetCell(v parquet.Value) cell {
	if v.IsNull() {
		return cell{null: true}
	}
	switch v.Kind() {
	case parquet.Int32:
		return cell{isNum: true, num: float64(v.Int32()), text: strconv.FormatInt(int64(v.Int32()), 10)}
	case parquet.Int64:
		return cell{isNum: true, num: float64(v.Int64()), text: strconv.FormatInt(v.Int64(), 10)}
	case parquet.Float:
		return cell{isNum: true, num: float64(v.Float()), text: strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)}
	case parquet.Double:
		return cell{isNum: true, num: v.Double()}
	case parquet.Boolean:
		return cell{text: strconv.FormatBool(v.Boolean())}
	default:
		return cell{text: string(v.ByteArray())}
	}
}
