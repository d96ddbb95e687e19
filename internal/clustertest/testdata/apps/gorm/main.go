// The GORM scenario: AutoMigrate (tables, a foreign key, an index, a
// many-to-many join table without a key of its own), CRUD and a
// transaction through NODE_A, reads through NODE_B (host:port each), then
// an AutoMigrate that adds a column. Exits non-zero on failure.
package main

import (
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

type Language struct {
	ID   uint   `gorm:"primaryKey"`
	Name string `gorm:"uniqueIndex;size:40"`
}

type User struct {
	ID        uint `gorm:"primaryKey"`
	Name      string
	Email     string `gorm:"index"`
	Age       int
	CreatedAt time.Time
	Orders    []Order
	Languages []Language `gorm:"many2many:user_languages;"`
}

type Order struct {
	ID     uint `gorm:"primaryKey"`
	UserID uint
	Amount float64
	Tags   string
}

// UserV2 adds a column to users, as a later version of the program would.
type UserV2 struct {
	ID       uint `gorm:"primaryKey"`
	Name     string
	Email    string `gorm:"index"`
	Age      int
	Nickname string `gorm:"size:30;default:'none'"`
}

func (UserV2) TableName() string { return "users" }

func open(addr string) *gorm.DB {
	host, port, _ := strings.Cut(addr, ":")
	dsn := fmt.Sprintf("host=%s port=%s user=certa dbname=certa sslmode=disable", host, port)
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		log.Fatalf("open %s: %v", addr, err)
	}
	return db
}

func check(err error, what string) {
	if err != nil {
		log.Fatalf("%s: %v", what, err)
	}
}

func main() {
	a, b := open(os.Getenv("NODE_A")), open(os.Getenv("NODE_B"))
	check(b.Exec("SET certa.consistency = 'sync'").Error, "sync reads")
	check(a.AutoMigrate(&User{}, &Order{}, &Language{}), "AutoMigrate")

	en, fr := Language{Name: "en"}, Language{Name: "fr"} // IDs come with u
	u := User{Name: "ann", Email: "ann@example.com", Age: 30, Orders: []Order{{Amount: 9.5, Tags: "x"}, {Amount: 1.25}},
		Languages: []Language{en, fr}}
	check(a.Create(&u).Error, "create")
	check(a.Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&User{}).Where("id = ?", u.ID).Update("age", 31).Error; err != nil {
			return err
		}
		return tx.Create(&Order{UserID: u.ID, Amount: 100}).Error
	}), "transaction")

	var got User
	check(b.Preload("Orders").Preload("Languages").First(&got, u.ID).Error, "read through B")
	if got.Age != 31 || len(got.Orders) != 3 || len(got.Languages) != 2 {
		log.Fatalf("read through B: age %d, %d orders, %d languages", got.Age, len(got.Orders), len(got.Languages))
	}
	var total float64
	check(b.Model(&Order{}).Select("sum(amount)").Where("user_id = ?", u.ID).Scan(&total).Error, "sum")
	if total != 110.75 {
		log.Fatalf("sum of orders %v, want 110.75", total)
	}
	check(a.Model(&u).Association("Languages").Delete(&u.Languages[1]), "delete association")
	check(a.Where("user_id = ?", u.ID).Delete(&Order{}).Error, "delete orders")
	var n int64
	check(b.Table("user_languages").Count(&n).Error, "count join table")
	if n != 1 {
		log.Fatalf("user_languages holds %d rows, want 1", n)
	}

	check(a.AutoMigrate(&UserV2{}), "AutoMigrate adding a column")
	// B's cached statements still have the old columns: as against
	// PostgreSQL, their first run fails with "cached plan must not change
	// result type", and pgx prepares them again.
	var v2 UserV2
	if err := b.First(&v2, u.ID).Error; err != nil && !strings.Contains(err.Error(), "cached plan must not change result type") {
		log.Fatalf("read through B after the migration: %v", err)
	}
	check(b.First(&v2, u.ID).Error, "read the new column through B")
	if v2.Nickname != "none" {
		log.Fatalf("nickname %q, want the default none", v2.Nickname)
	}
	fmt.Println("gorm scenario passed")
}
