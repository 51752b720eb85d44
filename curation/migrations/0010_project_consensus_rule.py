from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0009_record_changes"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="consensus_rule",
            field=models.CharField(
                choices=[
                    ("majority", "A strict majority of at least k labels"),
                    ("unanimity", "At least k labels, all alike"),
                ],
                db_default="majority",
                default="majority",
                max_length=10,
            ),
        ),
    ]
