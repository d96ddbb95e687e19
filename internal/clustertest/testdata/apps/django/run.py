"""The Django scenario: makemigrations and migrate (DDL inside transaction
blocks), ORM CRUD and createsuperuser through one node, reads through
another, inspectdb, and migrate back to zero. Run from a copy of this
directory with NODE_A and NODE_B set. Exits non-zero on failure."""
import decimal
import io
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
os.environ.setdefault("DJANGO_SUPERUSER_PASSWORD", "pw")
import django

django.setup()
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections, transaction

from shop.models import Author, Book, Tag

call_command("makemigrations", "shop", verbosity=0)
call_command("migrate", verbosity=0)
with connections["other"].cursor() as c:
    c.execute("SET certa.consistency = 'sync'")

with transaction.atomic():
    ann = Author.objects.create(name="Ann")
    sf, classic = Tag.objects.create(name="sf"), Tag.objects.create(name="classic")
    dune = Book.objects.create(author=ann, title="Dune", price=decimal.Decimal("12.50"), meta={"pages": 412})
    dune.tags.add(sf, classic)
call_command("createsuperuser", interactive=False, username="admin", email="admin@example.com", verbosity=0)
Book.objects.filter(title="Dune").update(price=decimal.Decimal("13.00"))

got = Book.objects.using("other").select_related("author").prefetch_related("tags").get(title="Dune")
assert got.author.name == "Ann", got.author.name
assert got.price == decimal.Decimal("13.00"), got.price
assert got.meta == {"pages": 412}, got.meta
assert sorted(t.name for t in got.tags.all()) == ["classic", "sf"]
admin = User.objects.using("other").get(username="admin")
assert admin.is_superuser and admin.check_password("pw")

ann.delete()  # cascades to the book and its tags
assert Book.objects.using("other").count() == 0
out = io.StringIO()
call_command("inspectdb", "shop_book", database="other", stdout=out)
model = out.getvalue()
for want in ("class ShopBook(models.Model)", "DecimalField(max_digits=8, decimal_places=2)", "title = models.CharField(max_length=200)",
             "author = models.ForeignKey('ShopAuthor', models.DO_NOTHING)", "meta = models.JSONField()"):
    assert want in model, (want, model)

call_command("migrate", "shop", "zero", verbosity=0)
with connections["other"].cursor() as c:
    c.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'shop_%'")
    assert c.fetchone()[0] == 0
print("django scenario passed")
