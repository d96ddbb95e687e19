from django.db import models

class Tag(models.Model):
    name = models.CharField(max_length=30, unique=True)

class Author(models.Model):
    name = models.CharField(max_length=100)
    born = models.DateField(null=True)

class Book(models.Model):
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    title = models.CharField(max_length=200, db_index=True)
    price = models.DecimalField(max_digits=8, decimal_places=2)
    published = models.DateTimeField(auto_now_add=True)
    tags = models.ManyToManyField(Tag)
    meta = models.JSONField(default=dict)
