package anonymize

import "math/bits"

// qidGroups numbers, per requirement, the classes of the current public
// generalisation projected on its QID: group[j][r], the class sizes and, per
// class, one record (to read its values).
type qidGroups struct {
	group [][]int32
	size  [][]int32
	rep   [][]int32
}

func (p *TDSPublic) groups() qidGroups {
	var g qidGroups
	n := len(p.Class)
	var h keyIndex
	for _, idx := range p.qidIdx {
		// bit-packed class keys when the QID's node ids fit in 64 bits
		var shift []uint
		var used uint
		for _, a := range idx {
			shift = append(shift, used)
			used += uint(bits.Len(uint(len(p.Attrs[a].Tax.Nodes))))
		}
		if used <= 64 {
			grp := make([]int32, n)
			var size, rep []int32
			h.reset(1024)
			for r := 0; r < n; r++ {
				var key uint64
				for i, a := range idx {
					key |= uint64(p.Gen[a][r]) << shift[i]
				}
				id, ok := h.index(key)
				if !ok {
					size = append(size, 0)
					rep = append(rep, int32(r))
				}
				grp[r] = int32(id)
				size[id]++
			}
			g.group = append(g.group, grp)
			g.size = append(g.size, size)
			g.rep = append(g.rep, rep)
			continue
		}
		grp := make([]int32, n)
		var size, rep []int32
		index := map[string]int32{}
		key := make([]byte, 0, 4*len(idx))
		for r := 0; r < n; r++ {
			key = key[:0]
			for _, a := range idx {
				v := p.Gen[a][r]
				key = append(key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			}
			id, ok := index[string(key)]
			if !ok {
				id = int32(len(size))
				index[string(key)] = id
				size = append(size, 0)
				rep = append(rep, int32(r))
			}
			grp[r] = id
			size[id]++
		}
		g.group = append(g.group, grp)
		g.size = append(g.size, size)
		g.rep = append(g.rep, rep)
	}
	return g
}
