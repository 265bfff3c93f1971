import { Link } from 'react-router';

export default function NotFound() {
  return (
    <section className="card">
      <h1>Page not found</h1>
      <p>There is no page at this address. Go to the <Link to="/">overview</Link>.</p>
    </section>
  );
}
