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
	st, err := f.Stat()
	if err != nil {
		return nil, fileError(desc, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: not a readable Parquet file: %w", ErrSource, desc, err)
	}
	fields := pf.Schema().Fields()
	names := make([]string, len(fields))
	for i, fl := range fields {
		if !fl.Leaf() || fl.Repeated() {
			return nil, fmt.Errorf("%w: %s: column %q is nested or repeated; only flat tables can be read", ErrSource, desc, fl.Name())
		}
		names[i] = fl.Name()
	}
	b, err := newBuilder(desc, names, schema, opts)
	if err != nil {
		return nil, err
	}
	for j, c := range b.cols {
		if c.Kind == Numeric && !parquetNumeric(fields[b.idx[j]].Type()) {
			return nil, fmt.Errorf("%w: %s: column %q has Parquet type %s, but the schema says numeric", ErrSource, desc, c.Name, fields[b.idx[j]].Type())
		}
	}
	row := make([]cell, len(names))
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
