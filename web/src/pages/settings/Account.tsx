import { useMe } from '../../lib/me';
import { Profile } from './Profile';
import { PasswordForm } from './PasswordForm';
import { Sessions } from './Sessions';
import { SmsEnrolment } from './SmsEnrolment';
import { IncidentFeed } from './IncidentFeed';
import { DeleteAccount } from './DeleteAccount';

/**
 * My account: the person's profile, password and sessions, their own
 * notifications (SMS to their phone, the organisation's incident feed), and
 * deleting the account. Password, sessions, SMS and deletion are for a
 * signed-in person only (the server refuses them to API keys).
 */
export default function Account() {
  const { me, can } = useMe();
  const session = me.key == null;
  return (
    <>
      <h1>My account</h1>
      <Profile />
      {session && <PasswordForm />}
      {session && <Sessions />}
      {(session && can('notification_channel:manage')) || can('incident:read') ? <h2 className="group">Notifications</h2> : null}
      {session && can('notification_channel:manage') && <SmsEnrolment />}
      {can('incident:read') && <IncidentFeed />}
      {session && <DeleteAccount />}
    </>
  );
}
