"""Every judge has its connection now (0005): it becomes required, and the address and key
variable that judges named go. Apart from 0005 so that PostgreSQL runs the column changes in a
transaction of their own, after the rows it moved."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0005_model_connections"),
    ]

    operations = [
        migrations.AlterField(
            model_name="judge",
            name="connection",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judges",
                to="judging.modelconnection",
            ),
        ),
        migrations.RemoveField(model_name="judge", name="api_key_env"),
        migrations.RemoveField(model_name="judge", name="base_url"),
    ]
