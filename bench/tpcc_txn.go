package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Next draws the next transaction from the mix, with its inputs drawn as
// TPC-C's clause 2 says.
func (w TPCC) Next(rng *rand.Rand, client int) Txn {
	s := w.size()
	home := client%s.warehouses + 1
	read, kind := w.draw(rng)
	if read {
		if kind == 0 {
			return w.orderStatus(rng, s, home)
		}
		return w.stockLevel(rng, s, home, client/s.warehouses%tpccDistricts+1)
	}
	switch kind {
	case 0:
		return w.newOrder(rng, s, home)
	case 1:
		return w.payment(rng, s, home)
	}
	return w.delivery(rng, home)
}

// draw picks a transaction type: reads are Order-Status (0) and
// Stock-Level (1); writes New-Order (0), Payment (1) and Delivery (2).
func (w TPCC) draw(rng *rand.Rand) (read bool, kind int) {
	readPercent := 0.0
	switch w.Mix {
	case "", "standard":
		// TPC-C's minimum mix: 45 New-Order, 43 Payment, 4 of each other.
		switch r := rng.IntN(100); {
		case r < 45:
			return false, 0
		case r < 88:
			return false, 1
		case r < 92:
			return false, 2
		case r < 96:
			return true, 0
		default:
			return true, 1
		}
	default:
		r, _, _ := strings.Cut(w.Mix, "/")
		readPercent, _ = strconv.ParseFloat(r, 64)
	}
	if rng.Float64()*100 < readPercent {
		return true, rng.IntN(2)
	}
	switch r := rng.IntN(92); {
	case r < 45:
		return false, 0
	case r < 88:
		return false, 1
	}
	return false, 2
}

// customerBy picks a customer as Payment and Order-Status do: 60% by last
// name, 40% by id.
func customerBy(rng *rand.Rand, s tpccSize) (id int, last string) {
	if rng.IntN(100) < 60 {
		return 0, lastName(nuRand(rng, 255, 0, min(999, s.customers-1), cLastRun))
	}
	return nuRand(rng, 1023, 1, s.customers, cCustomer), ""
}

// findCustomer returns the id of the customer named last in the district:
// the middle one by first name (TPC-C 2.5.2.2).
func findCustomer(ctx context.Context, c Conn, w, d int, last string) (int64, error) {
	rows, err := c.Query(ctx, "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first", w, d, last)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("tpcc: no customer named %s in district %d/%d", last, w, d)
	}
	return asInt(rows[(len(rows)-1)/2][0])
}

type orderLine struct {
	item, supply, quantity int
}

func (w TPCC) newOrder(rng *rand.Rand, s tpccSize, home int) Txn {
	d := rng.IntN(tpccDistricts) + 1
	cust := nuRand(rng, 1023, 1, s.customers, cCustomer)
	lines := make([]orderLine, rng.IntN(11)+5)
	allLocal := 1
	for i := range lines {
		l := orderLine{item: nuRand(rng, 8191, 1, s.items, cItem), supply: home, quantity: rng.IntN(10) + 1}
		if s.warehouses > 1 && rng.IntN(100) == 0 {
			for l.supply == home {
				l.supply = rng.IntN(s.warehouses) + 1
			}
			allLocal = 0
		}
		lines[i] = l
	}
	// Items in a fixed order, as implementations do, so that lock-based
	// systems do not deadlock on stock rows.
	slices.SortFunc(lines, func(a, b orderLine) int { return a.item - b.item })
	rollback := rng.IntN(100) == 0 // 1% name an unused item (TPC-C 2.4.1.4)
	if rollback {
		lines[len(lines)-1].item = s.items + 1
	}
	return Txn{Kind: "new-order", Run: func(ctx context.Context, c Conn) error {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		rows, err := c.Query(ctx, "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = $1 AND c_w_id = w_id AND c_d_id = $2 AND c_id = $3", home, d, cust)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("new-order: customer %d/%d/%d: %w", home, d, cust, errNoRows)
		}
		rows, err = c.Query(ctx, "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = $1 AND d_id = $2 FOR UPDATE", home, d)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("new-order: district %d/%d: %w", home, d, errNoRows)
		}
		oid, err := asInt(rows[0][0])
		if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "UPDATE district SET d_next_o_id = $1 WHERE d_w_id = $2 AND d_id = $3", oid+1, home, d); err != nil {
			return err
		}
		now := time.Now().Unix()
		if _, err := c.Exec(ctx, "INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)",
			home, d, oid, cust, now, len(lines), allLocal); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES ($1, $2, $3)", home, d, oid); err != nil {
			return err
		}
		for n, l := range lines {
			rows, err := c.Query(ctx, "SELECT i_price, i_name, i_data FROM item WHERE i_id = $1", l.item)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				if rollback {
					_, err := c.Exec(ctx, "ROLLBACK")
					return err // an expected rollback: the transaction is done
				}
				return fmt.Errorf("new-order: item %d: %w", l.item, errNoRows)
			}
			price, err := asInt(rows[0][0])
			if err != nil {
				return err
			}
			dist := fmt.Sprintf("s_dist_%02d", d)
			rows, err = c.Query(ctx, "SELECT s_quantity, "+dist+" FROM stock WHERE s_w_id = $1 AND s_i_id = $2 FOR UPDATE", l.supply, l.item)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				return fmt.Errorf("new-order: stock %d/%d: %w", l.supply, l.item, errNoRows)
			}
			qty, err := asInt(rows[0][0])
			if err != nil {
				return err
			}
			if qty -= int64(l.quantity); qty < 10 {
				qty += 91
			}
			remote := 0
			if l.supply != home {
				remote = 1
			}
			if _, err := c.Exec(ctx, "UPDATE stock SET s_quantity = $1, s_ytd = s_ytd + $2, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $3 WHERE s_w_id = $4 AND s_i_id = $5",
				qty, l.quantity, remote, l.supply, l.item); err != nil {
				return err
			}
			if _, err := c.Exec(ctx, "INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)",
				home, d, oid, n+1, l.item, l.supply, l.quantity, price*int64(l.quantity), asString(rows[0][1])); err != nil {
				return err
			}
		}
		_, err = c.Exec(ctx, "COMMIT")
		return err
	}}
}

func (w TPCC) payment(rng *rand.Rand, s tpccSize, home int) Txn {
	d := rng.IntN(tpccDistricts) + 1
	cw, cd := home, d
	if s.warehouses > 1 && rng.IntN(100) < 15 { // a customer of another warehouse
		for cw == home {
			cw = rng.IntN(s.warehouses) + 1
		}
		cd = rng.IntN(tpccDistricts) + 1
	}
	cid, last := customerBy(rng, s)
	amount := int64(rng.IntN(499901) + 100) // 1.00 to 5000.00
	hid := rng.Int64() | 1<<62
	return Txn{Kind: "payment", Run: func(ctx context.Context, c Conn) error {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2", amount, home); err != nil {
			return err
		}
		if _, err := c.Query(ctx, "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = $1", home); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3", amount, home, d); err != nil {
			return err
		}
		if _, err := c.Query(ctx, "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = $1 AND d_id = $2", home, d); err != nil {
			return err
		}
		id := int64(cid)
		if last != "" {
			var err error
			if id, err = findCustomer(ctx, c, cw, cd, last); err != nil {
				return err
			}
		}
		rows, err := c.Query(ctx, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 FOR UPDATE", cw, cd, id)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("payment: customer %d/%d/%d: %w", cw, cd, id, errNoRows)
		}
		if asString(rows[0][10]) == "BC" {
			rows, err := c.Query(ctx, "SELECT c_data FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3", cw, cd, id)
			if err != nil {
				return err
			}
			data := fmt.Sprintf("%d %d %d %d %d %d|%s", id, cd, cw, d, home, amount, asString(rows[0][0]))
			if len(data) > 500 {
				data = data[:500]
			}
			_, err = c.Exec(ctx, "UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1, c_payment_cnt = c_payment_cnt + 1, c_data = $2 WHERE c_w_id = $3 AND c_d_id = $4 AND c_id = $5",
				amount, data, cw, cd, id)
			if err != nil {
				return err
			}
		} else if _, err := c.Exec(ctx, "UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4",
			amount, cw, cd, id); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "INSERT INTO history (h_id, h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
			hid, id, cd, cw, d, home, time.Now().Unix(), amount, "payment"); err != nil {
			return err
		}
		_, err = c.Exec(ctx, "COMMIT")
		return err
	}}
}

func (w TPCC) orderStatus(rng *rand.Rand, s tpccSize, home int) Txn {
	d := rng.IntN(tpccDistricts) + 1
	cid, last := customerBy(rng, s)
	return Txn{Kind: "order-status", Run: func(ctx context.Context, c Conn) error {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		id := int64(cid)
		if last != "" {
			var err error
			if id, err = findCustomer(ctx, c, home, d, last); err != nil {
				return err
			}
		}
		if _, err := c.Query(ctx, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3", home, d, id); err != nil {
			return err
		}
		rows, err := c.Query(ctx, "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1", home, d, id)
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			if _, err := c.Query(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3", home, d, rows[0][0]); err != nil {
				return err
			}
		}
		_, err = c.Exec(ctx, "COMMIT")
		return err
	}}
}

func (w TPCC) delivery(rng *rand.Rand, home int) Txn {
	carrier := rng.IntN(10) + 1
	return Txn{Kind: "delivery", Run: func(ctx context.Context, c Conn) error {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		now := time.Now().Unix()
		for d := 1; d <= tpccDistricts; d++ {
			rows, err := c.Query(ctx, "SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 ORDER BY no_o_id LIMIT 1 FOR UPDATE", home, d)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				continue // nothing to deliver in this district
			}
			oid, err := asInt(rows[0][0])
			if err != nil {
				return err
			}
			if _, err := c.Exec(ctx, "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3", home, d, oid); err != nil {
				return err
			}
			cust, err := queryInt(ctx, c, "SELECT o_c_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3", home, d, oid)
			if err != nil {
				return err
			}
			if _, err := c.Exec(ctx, "UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4", carrier, home, d, oid); err != nil {
				return err
			}
			if _, err := c.Exec(ctx, "UPDATE order_line SET ol_delivery_d = $1 WHERE ol_w_id = $2 AND ol_d_id = $3 AND ol_o_id = $4", now, home, d, oid); err != nil {
				return err
			}
			total, err := queryInt(ctx, c, "SELECT COALESCE(SUM(ol_amount), 0) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3", home, d, oid)
			if err != nil {
				return err
			}
			if _, err := c.Exec(ctx, "UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4", total, home, d, cust); err != nil {
				return err
			}
		}
		_, err := c.Exec(ctx, "COMMIT")
		return err
	}}
}

func (w TPCC) stockLevel(rng *rand.Rand, s tpccSize, home, d int) Txn {
	threshold := rng.IntN(11) + 10
	return Txn{Kind: "stock-level", Run: func(ctx context.Context, c Conn) error {
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		next, err := queryInt(ctx, c, "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2", home, d)
		if err != nil {
			return err
		}
		if _, err := c.Query(ctx, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id < $3 AND ol_o_id >= $4 AND s_w_id = $1 AND s_i_id = ol_i_id AND s_quantity < $5",
			home, d, next, next-20, threshold); err != nil {
			return err
		}
		_, err = c.Exec(ctx, "COMMIT")
		return err
	}}
}
