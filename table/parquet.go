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
	if opts.sink != nil && opts.sink.found && b.projectable(fields) {
		if err := parquetColumn(ctx, pf, desc, b); err != nil {
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

// projectable says whether the sink's column alone can be read: no other
// loaded column can hold a value the row check refuses, because each is
// required (no NULL) and, when numeric, of an integer type (no NaN).
func (b *builder) projectable(fields []parquet.Field) bool {
	for j, c := range b.cols {
		if j == b.sinkCol {
			continue
		}
		fl := fields[b.idx[j]]
		if fl.Optional() || c.Kind == Numeric && (fl.Type().Kind() == parquet.Float || fl.Type().Kind() == parquet.Double) {
			return false
		}
	}
	return true
}

// parquetColumn hands one column's values to b's sink, reading only that
// column's pages, row group by row group; the rows are checked as the
// full reader checks them, that column alone.
func parquetColumn(ctx context.Context, pf *parquet.File, desc string, b *builder) error {
	one := &builder{source: desc, cols: []*Column{b.cols[b.sinkCol]}, idx: []int{0}, infer: b.infer, sink: b.sink}
	n := 0
	where := func(int) string { return fmt.Sprintf("%s: row %d", desc, n) }
	row := make([]cell, 1)
	buf := make([]parquet.Value, 1024)
	col := b.idx[b.sinkCol]
	for _, rg := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		pages := rg.ColumnChunks()[col].Pages()
		err := func() error {
			defer pages.Close()
			for {
				pg, err := pages.ReadPage()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return fmt.Errorf("%w: %s: row %d: %w", ErrSource, desc, n+1, err)
				}
				vals := pg.Values()
				for {
					k, err := vals.ReadValues(buf)
					for _, v := range buf[:k] {
						n++
						row[0] = parquetCell(v)
						if err := one.add(row, where); err != nil {
							parquet.Release(pg)
							return err
						}
					}
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						parquet.Release(pg)
						return fmt.Errorf("%w: %s: row %d: %w", ErrSource, desc, n+1, err)
					}
				}
				parquet.Release(pg)
			}
		}()
		if err != nil {
			return err
		}
	}
	return nil
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
