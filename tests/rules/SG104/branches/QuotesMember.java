import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class QuotesMember {
    void start() throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("quotes-group");
        // ok: SG104
        consumer.subscribe("Quotes", "updated");
        consumer.start();
    }
}
