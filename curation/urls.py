from __future__ import annotations

from django.urls import path

from curation.views import core, exports, imports, members, project_settings, users

app_name = "curation"

urlpatterns = [
    path("projects/new/", core.project_new, name="project_new"),
    path("users/", users.user_list, name="user_list"),
    path("users/<int:user_id>/", users.user_detail, name="user_detail"),
    path("users/<int:user_id>/unlock/", users.user_unlock, name="user_unlock"),
    path("users/<int:user_id>/tokens/revoke/", users.user_token_revoke, name="user_token_revoke"),
    path("p/<slug:slug>/", core.project_overview, name="project"),
    path(
        "p/<slug:slug>/settings/",
        project_settings.project_settings,
        name="project_settings",
    ),
    path(
        "p/<slug:slug>/settings/delete/",
        project_settings.project_delete_view,
        name="project_delete",
    ),
    path("p/<slug:slug>/members/", members.members, name="members"),
    path(
        "p/<slug:slug>/members/<int:membership_id>/remove/",
        members.member_remove,
        name="member_remove",
    ),
    path("p/<slug:slug>/members/invite/", members.member_invite, name="member_invite"),
    path(
        "p/<slug:slug>/members/invitations/<int:invitation_id>/withdraw/",
        members.invitation_withdraw_view,
        name="invitation_withdraw",
    ),
    path("p/<slug:slug>/imports/", imports.import_list, name="import_list"),
    path("p/<slug:slug>/imports/<int:batch_id>/", imports.import_detail, name="import_detail"),
    path(
        "p/<slug:slug>/imports/<int:batch_id>/changes/",
        imports.import_changes,
        name="import_changes",
    ),
    path(
        "p/<slug:slug>/imports/<int:batch_id>/undo/",
        imports.import_undo_view,
        name="import_undo",
    ),
    path("p/<slug:slug>/export/rjudge.zip", exports.export_rjudge, name="export_rjudge"),
]
