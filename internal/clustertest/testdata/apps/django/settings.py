"""Settings of the Django scenario: "default" is NODE_A (host:port), where
the scenario writes; "other" is NODE_B, where it reads."""
import os

SECRET_KEY = "certa-test"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "shop"]
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def db(addr):
    host, port = addr.rsplit(":", 1)
    return {"ENGINE": "django.db.backends.postgresql", "NAME": "certa", "USER": "certa", "HOST": host,
            "PORT": port, "OPTIONS": {"sslmode": "disable"}}


DATABASES = {"default": db(os.environ["NODE_A"]), "other": db(os.environ["NODE_B"])}
