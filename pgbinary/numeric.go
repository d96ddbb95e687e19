package pgbinary

import (
	"encoding/binary"
	"strconv"
	"strings"

	"certa/sqlerr"
)

// PostgreSQL's binary numeric: ndigits, weight, sign, dscale (int16 each),
// then ndigits base-10000 digits; the value is the sum of digit[i] *
// 10000^(weight-i), shown with dscale decimal places.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

// decodeNumeric returns the decimal text of a binary numeric.
func decodeNumeric(raw []byte) (string, error) {
	if len(raw) < 8 {
		return "", badBinary(1700, raw)
	}
	ndigits := int(binary.BigEndian.Uint16(raw[0:]))
	weight := int(int16(binary.BigEndian.Uint16(raw[2:])))
	sign := binary.BigEndian.Uint16(raw[4:])
	dscale := int(binary.BigEndian.Uint16(raw[6:]))
	switch sign {
	case numericNaN:
		return "NaN", nil
	case numericPInf:
		return "Infinity", nil
	case numericNInf:
		return "-Infinity", nil
	}
	if len(raw) != 8+2*ndigits || dscale > 0x3fff {
		return "", badBinary(1700, raw)
	}
	digit := func(i int) int { // base-10000 digit at position i (weight-relative)
		k := weight - i
		if k < 0 || k >= ndigits {
			return 0
		}
		return int(binary.BigEndian.Uint16(raw[8+2*k:]))
	}
	var b strings.Builder
	if sign == numericNeg {
		b.WriteByte('-')
	}
	if weight < 0 {
		b.WriteByte('0')
	}
	for i := weight; i >= 0; i-- {
		d := strconv.Itoa(digit(i))
		if i != weight {
			d = strings.Repeat("0", 4-len(d)) + d
		}
		b.WriteString(d)
	}
	if dscale > 0 {
		b.WriteByte('.')
		var frac strings.Builder
		for i := -1; frac.Len() < dscale; i-- {
			d := strconv.Itoa(digit(i))
			frac.WriteString(strings.Repeat("0", 4-len(d)) + d)
		}
		b.WriteString(frac.String()[:dscale])
	}
	return b.String(), nil
}

// appendNumeric appends the binary numeric of decimal text s.
func appendNumeric(dst []byte, s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	header := func(ndigits, weight int, sign uint16, dscale int) []byte {
		dst = binary.BigEndian.AppendUint16(dst, uint16(ndigits))
		dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
		dst = binary.BigEndian.AppendUint16(dst, sign)
		return binary.BigEndian.AppendUint16(dst, uint16(dscale))
	}
	switch strings.ToLower(s) {
	case "nan":
		return header(0, 0, numericNaN, 0), nil
	case "infinity", "+infinity":
		return header(0, 0, numericPInf, 0), nil
	case "-infinity":
		return header(0, 0, numericNInf, 0), nil
	}
	if strings.ContainsAny(s, "eE") { // SQLite's REAL text, e.g. 1.0e+20
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return dst, badNumeric(s)
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	sign := uint16(numericPos)
	if strings.HasPrefix(s, "-") {
		sign, s = numericNeg, s[1:]
	} else {
		s = strings.TrimPrefix(s, "+")
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return dst, badNumeric(s)
	}
	dscale := len(frac)
	intPart = strings.TrimLeft(intPart, "0")
	// Pad to whole base-10000 groups: the integer part on the left, the
	// fraction on the right.
	intPart = strings.Repeat("0", (4-len(intPart)%4)%4) + intPart
	frac += strings.Repeat("0", (4-len(frac)%4)%4)
	var groups []int
	for i := 0; i < len(intPart); i += 4 {
		g, _ := strconv.Atoi(intPart[i : i+4])
		groups = append(groups, g)
	}
	weight := len(groups) - 1
	for i := 0; i < len(frac); i += 4 {
		g, _ := strconv.Atoi(frac[i : i+4])
		groups = append(groups, g)
	}
	for len(groups) > 0 && groups[0] == 0 { // leading zero groups
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	if len(groups) == 0 {
		weight, sign = 0, numericPos
	}
	dst = header(len(groups), weight, sign, dscale)
	for _, g := range groups {
		dst = binary.BigEndian.AppendUint16(dst, uint16(g))
	}
	return dst, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func badNumeric(s string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", s)
}
